/**
 * Colour on a terminal: the real binary on a pseudo-terminal (util-linux `script`) colours status
 * words in ps/status/why/logs and the "stead:" of errors; NO_COLOR turns it off, and pipes (every
 * other test) get plain text.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, cliOnTty, FIXTURES, hasScript, lines, requireBuild, tempDir } from "./cli-helpers.js";

const TWO = join(FIXTURES, "two.ts");
const APPROVAL = join(FIXTURES, "approval.ts");

const GREEN = "\x1b[32m";
const YELLOW = "\x1b[33m";
const RESET = "\x1b[0m";
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

beforeAll(() => requireBuild());

describe.skipIf(!hasScript())("colour", () => {
  let dir: string;
  let store: string[];

  beforeAll(async () => {
    dir = tempDir();
    store = ["--store", join(dir, "s.db")];
    expect((await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "done-1", ...store], dir)).code).toBe(0);
    expect((await cli(["run", APPROVAL, "--input", '{"item":"x"}', "--id", "wait-1", ...store], dir)).code).toBe(3);
  });

  it("ps on a terminal colours each status word and keeps the columns aligned", async () => {
    const r = await cliOnTty(["ps", ...store], dir);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out.find((l) => l.startsWith("done-1"))).toContain(`${GREEN}completed${RESET}`);
    expect(out.find((l) => l.startsWith("wait-1"))).toContain(`${YELLOW}waiting${RESET}`);
    const [header, ...rows] = out.map(plain);
    // Colour codes take no columns: every row's UPDATED starts where the header's does.
    const column = header?.indexOf("UPDATED") ?? -1;
    expect(column).toBeGreaterThan(0);
    for (const row of rows) expect(row.slice(column - 2)).toMatch(/^ {2}\S/);
  });

  it("NO_COLOR turns it off; an empty NO_COLOR does not", async () => {
    const off = await cliOnTty(["ps", ...store], dir, { env: { NO_COLOR: "1" } });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("completed");
    expect(off.stdout).not.toContain("\x1b[");
    const empty = await cliOnTty(["ps", ...store], dir, { env: { NO_COLOR: "" } });
    expect(empty.stdout).toContain(`${GREEN}completed${RESET}`);
  });

  it("a pipe gets plain text", async () => {
    const r = await cli(["ps", ...store], dir);
    expect(r.stdout).toContain("completed");
    expect(r.stdout).not.toContain("\x1b[");
    const err = await cli(["status", "nope", ...store], dir);
    expect(err.stderr).toMatch(/^stead: no run with id nope/);
  });

  it("status, why and logs colour the run's status", async () => {
    const status = lines((await cliOnTty(["status", "wait-1", ...store], dir)).stdout);
    expect(status).toContain(`status      ${YELLOW}waiting${RESET}`);
    const why = lines((await cliOnTty(["why", "wait-1", ...store], dir)).stdout);
    expect(why[0]).toMatch(new RegExp(`^${escape(YELLOW)}Run wait-1 \\(cli-approval\\) is parked .*${escape(RESET)}$`));
    const logs = lines((await cliOnTty(["logs", "done-1", ...store], dir)).stdout);
    expect(logs.find((l) => plain(l).includes("run.completed"))).toContain(`${GREEN}run.completed`);
  });

  it("an error's stead: is red on a terminal; the exit code is the refusal's", async () => {
    const r = await cliOnTty(["status", "nope", ...store], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stdout)).toEqual([`\x1b[1;31mstead:${RESET} no run with id nope — list runs with \`stead ps\``]);
  });
});

function escape(s: string): string {
  return s.replace(/[[\]\\^$.*+?()|{}]/g, "\\$&");
}
