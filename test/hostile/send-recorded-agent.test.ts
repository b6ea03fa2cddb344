/**
 * `stead send <session> "text"` without `--agent` loads the module the session's last turn
 * recorded. When that file exports several agents it used to refuse ("exports 2 workflows"),
 * although the turn recorded which agent it ran: the next turn goes to that agent. On both stores.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";

const TWO = join(ROOT, "test", "fixtures", "hostile", "two-agents.ts");

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("stead send without --agent, on %s", (kind) => {
  let s: OnStore;
  afterEach(() => s.cleanup());

  const turns = async () => (await s.rows("SELECT turn, definition FROM runs WHERE session_id = ? ORDER BY turn", "s-two")).map((r) => [Number(r.turn), r.definition]);

  it("queues the next turn under the agent the session's last turn recorded, though its file exports two", async () => {
    s = await onStore(kind, "send-recorded-agent");
    const store = ["--store", s.location];
    const first = await cli(["send", "s-two", "hello", "--agent", TWO, "--name", "hostile-helper", ...store], ROOT);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^queued turn 1 of session s-two as run \S+ \(hostile-helper\)/);

    const next = await cli(["send", "s-two", "and then?", ...store], ROOT);
    expect(next.stderr).toBe("");
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/^queued turn 2 of session s-two as run \S+ \(hostile-helper\)/);
    expect(await turns()).toEqual([
      [1, "hostile-helper"],
      [2, "hostile-helper"],
    ]);

    // --name still chooses: another agent of the session is refused as before, and nothing is queued.
    const other = await cli(["send", "s-two", "third", "--name", "hostile-greeter", ...store], ROOT);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('belongs to "hostile-helper"');
    expect(await turns()).toHaveLength(2);
  });
});
