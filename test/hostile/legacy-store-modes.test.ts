/**
 * Review 2 (item 13): new stores are 0600, but a store created before the fix is 0644 (every
 * run readable by any user of the machine) and stays so: Stead opens it, writes to it, and its
 * -wal and -shm are created 0644 after it (SQLite copies the store file's mode), without a word.
 * A key file as readable is refused (STEAD_KEY_EXPOSED). Expected: the store's files made 0600,
 * or at least a warning naming the mode and the chmod, as for a key file.
 */
import { chmodSync, copyFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, spawnCli, tempDir, until } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";

const flow = workflow("legacy-modes", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `secret-ish output ${n}`));

describe("a store created 0644 before stores were made 0600", () => {
  let dir = "";
  let store = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-legacy-modes-");
    const made = join(dir, "made.db");
    await completeRuns(createStead({ store: made }), flow, [["r1", 1]]);
    // As an older Stead left it under umask 022.
    store = join(dir, "stead.db");
    copyFileSync(made, store);
    chmodSync(store, 0o644);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is made private (or the user is told) when Stead opens it to write", async () => {
    const held = spawnCli(["serve", "--store", store, "--listen", "127.0.0.1:0", "--no-login-url"], dir, { umask: "022" });
    try {
      await until("the server to listen", () => (/on http:\/\//.test(held.stdout()) ? true : undefined), 30_000);
      const r = await cli(["cancel", "r1", "--store", store], dir, { umask: "022" });
      const modes = Object.fromEntries(
        readdirSync(dir)
          .filter((f) => f.startsWith("stead.db"))
          .map((f) => [f, (statSync(join(dir, f)).mode & 0o777).toString(8)]),
      );
      const told = /0644|chmod|readable/i.test(held.stderr() + held.stdout() + r.stderr);
      const allPrivate = Object.values(modes).every((m) => m === "600");
      expect({ modes, allPrivateOrTold: allPrivate || told }).toEqual({ modes, allPrivateOrTold: true });
      // Told, not changed (a store shared with a group on purpose keeps working): once per process,
      // naming the file, its mode and the chmod that makes it private.
      expect(modes["stead.db"]).toBe("644");
      for (const err of [held.stderr(), r.stderr]) {
        expect(err.match(/SteadWarning/g)?.length, err).toBe(1);
        expect(err).toContain(`every user of this machine may read or change the store's files: ${store} (0644)`);
        expect(err).toContain(`chmod 600 ${store} ${store}-wal ${store}-shm`);
      }
    } finally {
      held.child.kill("SIGTERM");
      await held.done;
    }
  }, 60_000);

  it("says its group may read one that is 0640, and says nothing with STEAD_ALLOW_READABLE_STORE=1 or once it is 0600", async () => {
    const group = join(dir, "group.db");
    copyFileSync(store, group);
    chmodSync(group, 0o640);
    const told = await cli(["ps", "--store", group], dir);
    expect(told.code, told.stderr).toBe(0);
    expect(told.stderr).toContain(`the store's group may read or change the store's files: ${group} (0640)`);
    const allowed = await cli(["ps", "--store", group], dir, { env: { STEAD_ALLOW_READABLE_STORE: "1" } });
    expect({ code: allowed.code, stderr: allowed.stderr }).toEqual({ code: 0, stderr: "" });
    for (const f of readdirSync(dir).filter((f) => f.startsWith("group.db"))) chmodSync(join(dir, f), 0o600);
    const quiet = await cli(["ps", "--store", group], dir);
    expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);
});
