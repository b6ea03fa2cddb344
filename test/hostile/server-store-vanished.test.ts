/**
 * Issue 39, item 15: an API-only server (`stead serve`, no `--worker`) whose SQLite store is deleted
 * (`rm -rf .stead`) or replaced by another file under it. It answered /readyz 200, refused an
 * approval 503 STEAD_STORE_LOST and then showed that approval applied (it had landed in the
 * unlinked file), and its fix told a server's user to start "the worker" again. Now the store
 * refuses every read and write once its file is gone, /readyz says so, and `stead serve` exits 7 by
 * itself with a fix that fits a server. Asserted from the HTTP answers and the exit of the real CLI
 * process, and (where a process that exits cannot be asked twice) of a server in this process.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createStead, workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { cli, FIXTURES, requireBuild, spawnCli, tempDir, until } from "../cli-helpers.js";

beforeAll(requireBuild);

const APPROVAL = join(FIXTURES, "approval.ts");

interface Seen {
  /** The HTTP status, or "gone" when the server no longer took the connection. */
  status: number | "gone";
  code?: string;
  body: string;
}

async function seen(url: string, init: RequestInit = {}): Promise<Seen> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    return { status: "gone", body: "" };
  }
  const body = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(body) as { code?: string }).code;
  } catch {
    code = undefined;
  }
  return { status: res.status, ...(code === undefined ? {} : { code }), body };
}

/** Refused for the lost store, or no longer served: never an answer read from the vanished file. */
const REFUSED_OR_GONE = [{ status: 503, code: "STEAD_STORE_LOST" }, { status: "gone" }];
const outcome = (s: Seen) => (s.status === "gone" ? { status: "gone" } : { status: s.status, code: s.code });

async function waitingRunAndToken(dir: string, id: string): Promise<string> {
  expect((await cli(["run", APPROVAL, "--input", '{"item":"tea"}', "--id", id], dir)).code).toBe(3);
  const made = await cli(["tokens", "create", "--role", "operator", "--name", "olivia", "--json"], dir);
  return (JSON.parse(made.stdout) as { token: string }).token;
}

/** `stead serve` (no worker) on the store in `dir`, ready. */
async function serving(dir: string) {
  const server = spawnCli(["serve", "--listen", "127.0.0.1:0", "--no-login-url"], dir);
  onTestFinished(() => void server.child.kill("SIGKILL"));
  const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
  expect((await seen(`${url}/readyz`)).status).toBe(200);
  return { server, url };
}

describe("stead serve (no worker) over a store deleted under it", () => {
  it("deleted: nothing refused is shown applied, /readyz is not ready, and the process exits 7 with a fix for a server", async () => {
    const dir = tempDir();
    const token = await waitingRunAndToken(dir, "r1");
    const { server, url } = await serving(dir);
    const before = JSON.parse((await seen(`${url}/api/v1/runs/r1`)).body) as { run: { status: string } };
    expect(before.run.status).toBe("waiting");

    rmSync(join(dir, ".stead"), { recursive: true, force: true });
    const approve = await seen(`${url}/api/v1/runs/r1/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    const read = await seen(`${url}/api/v1/runs/r1`);
    const ready = await seen(`${url}/readyz`);
    const listing = await seen(`${url}/api/v1/runs`);
    for (const s of [approve, read, ready, listing]) expect(REFUSED_OR_GONE).toContainEqual(outcome(s));
    for (const s of [read, listing]) expect(s.body).not.toMatch(/approval\.approved|run\.runnable|"resolved"/);

    // No request needed: it notices by itself, stops, and says what to do.
    const exit = await server.done;
    expect(exit.code, exit.stderr).toBe(7);
    expect(exit.stderr).toMatch(/the store .*stead\.db was deleted while this process had it open/);
    expect(exit.stderr).toMatch(/stead serve/);
    expect(exit.stderr).not.toMatch(/start the worker again/);
    expect((await seen(`${url}/readyz`)).status).toBe("gone");
    // It made no new store where the old one was.
    expect(existsSync(join(dir, ".stead"))).toBe(false);
  });

  it("replaced by a new store: the server shows neither store's runs and exits 7; the new store is left as its writer left it", async () => {
    const dir = tempDir();
    const token = await waitingRunAndToken(dir, "r1");
    const { server, url } = await serving(dir);

    rmSync(join(dir, ".stead"), { recursive: true, force: true });
    // Another store at the same path, holding a run of its own.
    expect((await cli(["run", APPROVAL, "--input", '{"item":"cake"}', "--id", "r2"], dir)).code).toBe(3);
    const answers = [
      await seen(`${url}/api/v1/runs/r2/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" }),
      await seen(`${url}/api/v1/runs/r1`),
      await seen(`${url}/readyz`),
    ];
    for (const s of answers) expect(REFUSED_OR_GONE).toContainEqual(outcome(s));

    const exit = await server.done;
    expect(exit.code, exit.stderr).toBe(7);
    expect(exit.stderr).toMatch(/the store .*stead\.db was (deleted|replaced by another file) while this process had it open/);
    // The new store's run still waits: the old server decided nothing in it.
    const status = await cli(["status", "r2", "--json"], dir);
    const r2 = JSON.parse(status.stdout) as { run: { status: string }; waits: { name: string; status: string; resolvedBy: string | null }[] };
    expect(r2.run.status).toBe("waiting");
    expect(r2.waits).toEqual([expect.objectContaining({ name: "ship", status: "open", resolvedBy: null })]);
  });
});

const shipped = workflow("vanished-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

describe("a server in this process over a store deleted under it", () => {
  let stead: Stead | undefined;
  let server: Listening | undefined;
  afterEach(async () => {
    await server?.close(1_000);
    await stead?.close().catch(() => undefined);
  });

  it("answers /readyz 503, refuses the approval, and then refuses every read rather than show what it wrote into the unlinked file", async () => {
    const dir = tempDir();
    stead = createStead({ store: join(dir, ".stead", "stead.db") });
    const { token } = await stead.tokens.create({ name: "olivia", role: "operator" });
    const run = await stead.run(shipped, null, { followTimersMs: 0 });
    server = await listen({ stead, authenticate: tokensOf(stead), port: 0, console: false });
    expect((await seen(`${server.url}/readyz`)).status).toBe(200);

    rmSync(join(dir, ".stead"), { recursive: true, force: true });
    // Not ready, before any write has found out.
    expect(outcome(await seen(`${server.url}/readyz`))).toEqual({ status: 503, code: "STEAD_STORE_LOST" });
    const approve = await seen(`${server.url}/api/v1/runs/${run.id}/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(outcome(approve)).toEqual({ status: 503, code: "STEAD_STORE_LOST" });
    expect((JSON.parse(approve.body) as { fix: string }).fix).toMatch(/restore the store/);
    for (const path of [`/api/v1/runs/${run.id}`, `/api/v1/runs/${run.id}/events`, "/api/v1/runs", "/api/v1/waits", "/readyz"]) {
      const s = await seen(`${server.url}${path}`);
      expect(outcome(s), path).toEqual({ status: 503, code: "STEAD_STORE_LOST" });
      expect(s.body).not.toMatch(/approval\.approved|run\.runnable/);
    }
    await expect(stead.runs.get(run.id)).rejects.toMatchObject({ code: "STEAD_STORE_LOST" });
    expect(existsSync(join(dir, ".stead"))).toBe(false);
  });
});
