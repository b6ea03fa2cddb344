/**
 * The CLI records who gave each control command, as the answer verbs always did: `stead run` and
 * `stead send` take `--by` too, and default to $USER@host. Read from the store file's events.
 */
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild, tempDir } from "./cli-helpers.js";

beforeAll(() => requireBuild());

const APPROVAL = join(FIXTURES, "approval.ts");
const TWO = join(FIXTURES, "two.ts");

function byOf(db: string, type: string): { run: string; by: unknown }[] {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const rows = file.prepare("SELECT run_id, data FROM events WHERE type = ? ORDER BY seq").all(type) as { run_id: string; data: string }[];
    return rows.map((r) => ({ run: r.run_id, by: (JSON.parse(r.data) as { by?: unknown }).by }));
  } finally {
    file.close();
  }
}

describe("stead CLI: who gave each command is in its event", () => {
  it("run and send record --by, or $USER@host without it; an answer records its --by", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const store = ["--store", db];
    const me = `tester@${hostname()}`;
    expect((await cli(["run", APPROVAL, "--input", '{"item":"a"}', "--id", "mine", "--detach", ...store], dir)).code).toBe(0);
    expect((await cli(["run", APPROVAL, "--input", '{"item":"b"}', "--id", "carols", "--by", "carol", ...store], dir)).code).toBe(3);
    expect((await cli(["send", "chat-1", "hello", "--agent", TWO, "--name", "cli-alpha", ...store], dir)).code).toBe(0);
    expect((await cli(["send", "chat-1", "again", "--name", "cli-alpha", "--by", "dora", ...store], dir)).code).toBe(0);
    expect((await cli(["approve", "carols", "ship", "--by", "erin", ...store], dir)).code).toBe(0);

    const created = byOf(db, "run.created");
    expect(created.filter((e) => e.run === "mine" || e.run === "carols")).toEqual([
      { run: "mine", by: me },
      { run: "carols", by: "carol" },
    ]);
    expect(created.filter((e) => e.run !== "mine" && e.run !== "carols").map((e) => e.by)).toEqual([me, "dora"]);
    expect(byOf(db, "approval.approved")).toEqual([{ run: "carols", by: "erin" }]);
  });
});
