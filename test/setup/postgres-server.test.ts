/**
 * The Postgres test plumbing itself: the shared server, per-test databases, private servers that
 * restart, and the watchdog that removes a server whose owner was SIGKILLed.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caught, waitUntil } from "../helpers/waiting.js";
import { databaseExists, withClient } from "./databases.js";
import type { ServerHandle } from "./embedded-server.js";
import { useFreshDatabases, postgresSetup, PRIVATE_SERVER_UNAVAILABLE, startPrivateServer, type PrivateServer } from "./postgres.js";

const setup = postgresSetup();
const EXTERNAL = setup.source === "external" ? "STEAD_TEST_DATABASE_URL is set: the shared server is not one this run started" : undefined;

function pgCode(e: unknown): string | undefined {
  return (e as { code?: string }).code;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return pgCode(e) === "EPERM";
  }
}

describe("shared Postgres server", () => {
  const fresh = useFreshDatabases();

  it("freshDatabase gives each caller its own empty database", async () => {
    const a = await fresh("iso a");
    const b = await fresh("iso a");
    expect(a.name).not.toBe(b.name);
    expect(a.name.startsWith(`${setup.databasePrefix}_iso_a_`)).toBe(true);
    await withClient(a.url, (c) => c.query("CREATE TABLE only_in_a (x int); INSERT INTO only_in_a VALUES (1)"));
    const tablesIn = (url: string) =>
      withClient(url, async (c) => (await c.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'")).rows.map((r) => r.t));
    expect(await tablesIn(a.url)).toEqual(["only_in_a"]);
    expect(await tablesIn(b.url)).toEqual([]);
  });

  it("drop() terminates open connections, removes the database, and may be called again", async () => {
    const d = await fresh("drop me");
    const held = new pg.Client({ connectionString: d.url });
    const heldErrors: unknown[] = [];
    held.on("error", (e) => heldErrors.push(e));
    await held.connect();
    try {
      await d.drop();
      expect(await databaseExists(setup.adminUrl, d.name)).toBe(false);
      // The server tells the held connection it was terminated (admin_shutdown).
      await waitUntil("the held connection to be told", () => heldErrors.length > 0);
      expect(pgCode(heldErrors[0])).toBe("57P01");
      await expect(held.query("SELECT 1")).rejects.toThrow();
      await expect(d.drop()).resolves.toBeUndefined();
    } finally {
      await held.end().catch(() => undefined);
    }
  });

  it.skipIf(EXTERNAL)("listens on 127.0.0.1 only and refuses a wrong password", async () => {
    const d = await fresh("auth");
    const settings = await withClient(d.url, async (c) => (await c.query<{ l: string; s: string }>("SELECT current_setting('listen_addresses') AS l, current_setting('unix_socket_directories') AS s")).rows[0]);
    expect(settings).toEqual({ l: "127.0.0.1", s: "" });
    const wrong = new URL(d.url);
    wrong.password = "not-the-password";
    expect(pgCode(await caught(() => withClient(wrong.toString(), (c) => c.query("SELECT 1"))))).toBe("28P01"); // invalid_password
  });
});

describe.skipIf(PRIVATE_SERVER_UNAVAILABLE)(`private Postgres server${PRIVATE_SERVER_UNAVAILABLE ? ` (skipped: ${PRIVATE_SERVER_UNAVAILABLE})` : ""}`, () => {
  let server: PrivateServer;
  beforeAll(async () => {
    server = await startPrivateServer();
  });
  afterAll(() => server?.close());

  it("restart(downMs) keeps port and data; connections from before are cut, new ones work", async () => {
    const d = await server.freshDatabase("restart");
    await withClient(d.url, (c) => c.query("CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"));
    const before = new pg.Client({ connectionString: d.url });
    before.on("error", () => undefined);
    await before.connect();
    try {
      const port = server.port;
      const restarting = server.restart(300);
      await waitUntil("the server to go down", () => !server.running());
      // While it is down, connecting is refused at once (or told the server is shutting down), not hung.
      const refused = await caught(() => withClient(d.url, (c) => c.query("SELECT 1")));
      await restarting;
      expect(["ECONNREFUSED", "57P03"]).toContain(pgCode(refused));
      expect(server.port).toBe(port);
      expect(server.running()).toBe(true);
      expect(await caught(() => before.query("SELECT 1"))).toBeInstanceOf(Error);
      const rows = await withClient(d.url, async (c) => (await c.query<{ x: number }>("SELECT x FROM kept")).rows);
      expect(rows).toEqual([{ x: 42 }]);
    } finally {
      await before.end().catch(() => undefined);
      await d.drop();
    }
  });

  it("an immediate stop (crash) loses no committed row", async () => {
    const d = await server.freshDatabase("crash");
    await withClient(d.url, (c) => c.query("CREATE TABLE kept (x int); INSERT INTO kept SELECT generate_series(1, 1000)"));
    await server.stop("immediate");
    expect(server.running()).toBe(false);
    await server.start();
    const n = await withClient(d.url, async (c) => (await c.query<{ n: string }>("SELECT count(*) AS n FROM kept")).rows[0]?.n);
    expect(n).toBe("1000");
    await d.drop();
  });

  it("a server whose owner process is SIGKILLed is stopped and its files removed", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./embedded-server-child.ts", import.meta.url))], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    const handle = await waitUntil("the child's server handle", () => (out.includes("\n") ? (JSON.parse(out.split("\n")[0] ?? "") as ServerHandle) : undefined), { timeoutMs: 30_000 });
    const postmaster = Number(readFileSync(join(handle.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    expect(alive(postmaster)).toBe(true);
    await withClient(`postgres://${handle.user}:${handle.password}@127.0.0.1:${handle.port}/postgres`, (c) => c.query("SELECT 1"));
    child.kill("SIGKILL");
    await waitUntil("the orphaned postmaster to stop", () => !alive(postmaster), { timeoutMs: 20_000, pollMs: 100 });
    await waitUntil("the orphaned server's files to be removed", () => !existsSync(handle.root), { timeoutMs: 20_000, pollMs: 100 });
  });
});
