/**
 * Review 2 (items 11, 13): `stead import -` copies standard input to a spool file in the temp
 * directory before it checks it. Interrupted (Ctrl-C) while reading, the process exits and the
 * copy of the dump stays there (a whole store's rows, plain for a plain store; megabytes to
 * gigabytes of disk), nothing ever removes it. Expected: an interrupted import leaves no file.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { BIN, cli, requireBuild, tempDir, until } from "../cli-helpers.js";

describe("stead import - interrupted while it reads standard input", () => {
  let dir = "";
  let spoolRoot = "";

  beforeAll(() => {
    requireBuild();
    dir = tempDir("stead-import-spool-");
    spoolRoot = join(dir, "tmp");
    mkdirSync(spoolRoot);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["SIGINT", "SIGTERM"] as const)("leaves no copy of the dump in the temp directory (%s)", async (signal) => {
    const made = await cli(["export", "--out", join(dir, "d.dump"), "--store", join(dir, "src.db")], dir);
    const header = made.code === 0 ? (readFileSync(join(dir, "d.dump"), "utf8").split("\n")[0] ?? "") : '{"stead-export":1}';
    const child = spawn(process.execPath, [BIN, "import", "-", "--store", join(dir, "target", "s.db")], { cwd: dir, env: { ...process.env, TMPDIR: spoolRoot }, stdio: ["pipe", "ignore", "ignore"] });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    // The dump arrives slowly (a pipe from another machine): the header and part of a row, then nothing yet.
    child.stdin.write(`${header}\n{"t":"runs","r":{"id":"x`);
    await until("the spool file", () => (readdirSync(spoolRoot).length > 0 ? true : undefined), 20_000);
    child.kill(signal);
    const code = await exited;
    expect({ left: readdirSync(spoolRoot), code, target: existsSync(join(dir, "target")) }).toEqual({ left: [], code: 130, target: false });
  }, 60_000);
});
