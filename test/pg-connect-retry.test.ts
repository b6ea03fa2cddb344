/**
 * `stead worker` started while Postgres is down (or restarting) keeps trying with bounded backoff,
 * printing each try, and goes to work once the server is up; `--connect-timeout` gives up with
 * exit 7 and one clear line. Real CLI processes against a private Postgres server this file stops
 * and starts.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, type WorkflowDefinition } from "../src/index.js";
import { slowFlow } from "./fixtures/cli/slow.js";
import { FIXTURES, lines, readText, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";
import { PRIVATE_SERVER_UNAVAILABLE, startPrivateServer, type PrivateServer } from "./setup/postgres.js";

const SLOW = join(FIXTURES, "slow.ts");
const tries = (stderr: string) => (stderr.match(/trying again in/g) ?? []).length;

describe.skipIf(PRIVATE_SERVER_UNAVAILABLE !== undefined)("stead worker started while Postgres is down", () => {
  let server: PrivateServer;
  beforeAll(async () => {
    requireBuild();
    server = await startPrivateServer();
  });
  afterAll(() => server?.close());

  it("keeps trying, printing each try, and runs the queued run once the server is up", async () => {
    const db = await server.freshDatabase("retry");
    const dir = tempDir();
    const log = join(dir, "effects.log");
    const stead = createStead({ store: db.url });
    // The fixture's definition is typed by the built package (it imports "stead"), the same object at run time.
    await stead.runs.start(slowFlow as unknown as WorkflowDefinition<{ log: string; ms: number }>, { log, ms: 10 }, { id: "p1" });
    await stead.close();
    await server.stop();

    const worker = spawnCli(["worker", SLOW, "--poll", "50", "--store", db.url], dir, { timeoutMs: 60_000 });
    await until("two tries to be printed", () => (tries(worker.stderr()) >= 2 ? true : undefined), 20_000);
    expect(worker.child.exitCode).toBeNull();
    expect(worker.stderr()).toMatch(/cannot reach Postgres at postgres:\/\/.*\*\*\*@127\.0\.0\.1.*; trying again in \d+/);
    expect(worker.stderr()).not.toContain(db.url);

    await server.start();
    await until("the run to complete", () => (worker.stdout().includes("p1 completed") ? true : undefined), 30_000);
    worker.child.kill("SIGTERM");
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(0);
    expect(lines(readText(log))).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    await db.drop();
  });

  it("wrong credentials are refused at once (exit 2): trying again would not help", async () => {
    const db = await server.freshDatabase("creds");
    const wrong = new URL(db.url);
    wrong.password = "definitely-wrong";
    const exit = await spawnCli(["worker", SLOW, "--store", wrong.toString()], tempDir(), { timeoutMs: 30_000 }).done;
    expect(exit.code, exit.stderr).toBe(2);
    expect(tries(exit.stderr)).toBe(0);
    expect(lines(exit.stderr)).toEqual([expect.stringMatching(/^stead: Postgres at .* refused the credentials/)]);
    expect(exit.stderr).not.toContain("definitely-wrong");
    await db.drop();
  });

  it("--connect-timeout gives up with exit 7 and the store named, after printing its tries", async () => {
    const db = await server.freshDatabase("timeout");
    await server.stop();
    try {
      const started = Date.now();
      const exit = await spawnCli(["worker", SLOW, "--connect-timeout", "2s", "--store", db.url], tempDir(), { timeoutMs: 30_000 }).done;
      expect(exit.code, exit.stderr).toBe(7);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      expect(tries(exit.stderr)).toBeGreaterThanOrEqual(2);
      const last = lines(exit.stderr).pop() ?? "";
      expect(last).toMatch(/^stead: cannot reach Postgres at postgres:\/\/.*127\.0\.0\.1.* — check that the server is running/);
    } finally {
      await server.start();
      await db.drop();
    }
  });
});
