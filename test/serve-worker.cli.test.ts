/**
 * `stead serve --worker <file>` and `stead worker --metrics` as real processes on an SQLite store,
 * read back from the file through a handle of the test's own.
 */
import { request } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { cli, FIXTURES, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

beforeAll(requireBuild);

const POLL = "60s";
/** How long before the poll's earliest firing the test gives up: a loaded machine's slack. */
const MARGIN_MS = 20_000;

function rows(dir: string, sql: string, ...params: unknown[]): Record<string, unknown>[] {
  const db = new Database(join(dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

async function detachedRun(dir: string, file: string, input: unknown): Promise<string> {
  const r = await cli(["run", file, "--input", JSON.stringify(input), "--detach"], dir);
  expect(r.stderr).toBe("");
  const id = /run (\S+) started/.exec(r.stdout)?.[1];
  if (!id) throw new Error(`no run id in: ${r.stdout}`);
  return id;
}

describe("stead serve --worker", () => {
  it("serves the API and runs the file's workflows in one process: runs park, approvals and a start through the API go on at once; SIGTERM stops both", async () => {
    const dir = tempDir();
    const file = join(FIXTURES, "approval.ts");
    const id = await detachedRun(dir, file, { item: "tea" });
    const made = await cli(["tokens", "create", "--role", "operator", "--name", "olivia", "--json"], dir);
    const { token } = JSON.parse(made.stdout) as { token: string };
    // Every tick of the worker is after this: its polls fire 60 s after one at the earliest.
    const spawnedAt = Date.now();
    const server = spawnCli(["serve", "--listen", "127.0.0.1:0", "--worker", file, "--poll", POLL], dir);
    // A failed assertion must not leave the server running after the test.
    onTestFinished(() => void server.child.kill("SIGKILL"));
    const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
    // Printed just after the URL line, which a pipe may deliver first, alone.
    await until("the worker's start line", () => /worker \S+ started: cli-approval/.test(server.stdout()) || undefined);
    // The worker claims the run at its start and it runs to its approval.
    const get = async () => (await (await fetch(`${url}/api/v1/runs/${id}`)).json()) as { run: { status: string; output: unknown } };
    await until("the run to park at its approval", async () => ((await get()).run.status === "waiting" ? true : undefined));
    const pollDue = spawnedAt + 60_000;
    expect(rows(dir, "SELECT step_id, status FROM steps WHERE run_id = ? ORDER BY seq", id)).toEqual([
      { step_id: "prepare", status: "completed" },
      { step_id: "ship", status: "waiting" },
    ]);
    // The worker's ticks after the run goes on are later than this: its next poll is 60 s after it at the earliest.
    const approvedAt = Date.now();
    const res = await fetch(`${url}/api/v1/runs/${id}/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    // The next step is done before the worker's poll would have fired: the approval woke it.
    await until(
      "the step after the approval",
      () => (rows(dir, "SELECT status FROM runs WHERE id = ?", id)[0]?.status === "completed" ? true : undefined),
      pollDue - MARGIN_MS - Date.now(),
    );
    expect(rows(dir, "SELECT step_id, status FROM steps WHERE run_id = ? ORDER BY seq", id).map((s) => s.step_id)).toEqual(["prepare", "ship", "ship-it"]);
    expect((await get()).run.output).toEqual({ prepared: "prepared tea", shipped: "shipped tea", by: "olivia" });
    // A run started through the API while the worker idles is claimed at once too, and completes once approved.
    const started = await fetch(`${url}/api/v1/runs`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ definition: "cli-approval", input: { item: "cake" } }) });
    expect(started.status).toBe(200);
    const second = ((await started.json()) as { id: string }).id;
    const idleDue = approvedAt + 60_000;
    await until("the API-started run to park", () => (rows(dir, "SELECT status FROM runs WHERE id = ?", second)[0]?.status === "waiting" ? true : undefined), idleDue - MARGIN_MS - Date.now());
    const approved = await fetch(`${url}/api/v1/runs/${second}/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    expect(approved.status).toBe(200);
    await until("the API-started run to complete", () => (rows(dir, "SELECT status FROM runs WHERE id = ?", second)[0]?.status === "completed" ? true : undefined), idleDue - MARGIN_MS - Date.now());
    expect(JSON.parse(String(rows(dir, "SELECT output FROM runs WHERE id = ?", second)[0]?.output))).toEqual({ prepared: "prepared cake", shipped: "shipped cake", by: "olivia" });
    server.child.kill("SIGTERM");
    const end = await server.done;
    expect(end.stderr).toBe("");
    expect(end.code).toBe(0);
    const out = end.stdout;
    expect(out.indexOf("worker stopped")).toBeGreaterThan(out.indexOf("stopping:"));
    expect(out.trimEnd().endsWith("server stopped")).toBe(true);
  });

  it("refuses a --worker file that does not exist before opening the store", async () => {
    const dir = tempDir();
    const r = await cli(["serve", "--listen", "127.0.0.1:0", "--worker", "missing.ts"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no file missing\.ts/);
    expect(() => rows(dir, "SELECT 1")).toThrow();
  });
});

describe("stead worker --metrics", () => {
  it("serves the worker's claims and commits at /metrics on its own loopback port, as the store counts them", async () => {
    const dir = tempDir();
    const file = join(FIXTURES, "approval.ts");
    const worker = spawnCli(["worker", file, "--poll", "50", "--metrics", "127.0.0.1:0"], dir);
    const url = await until("the metrics URL", () => /metrics on (http:\/\/\S+\/metrics)/.exec(worker.stdout())?.[1]);
    const workerId = /worker (\S+) started/.exec(worker.stdout())?.[1] ?? "";
    const ids = [await detachedRun(dir, file, { item: "a" }), await detachedRun(dir, file, { item: "b" })];
    await until("both runs parked", () => (rows(dir, "SELECT count(*) AS n FROM runs WHERE status = 'waiting'")[0]?.n === 2 ? true : undefined));
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const text = await res.text();
    const claims = rows(dir, "SELECT data FROM events WHERE type = 'run.claimed'").filter((r) => (JSON.parse(String(r.data)) as { worker: string }).worker === workerId).length;
    expect(claims).toBe(2);
    expect(text).toContain(`stead_claims_total{worker="${workerId}"} ${claims}`);
    const commits = Number(new RegExp(`stead_step_commit_seconds_count\\{worker="${workerId.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\} (\\d+)`).exec(text)?.[1]);
    expect(commits).toBeGreaterThanOrEqual(rows(dir, "SELECT count(*) AS n FROM steps WHERE step_id = 'prepare' AND status = 'completed'")[0]?.n as number);
    // A worker's metrics hold no store counts: those are the server's.
    expect(text).not.toContain("stead_runs{");
    expect((await fetch(url.replace("/metrics", "/other"))).status).toBe(404);
    // Another Host name on loopback is a page reaching in through DNS rebinding: refused.
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(url, { headers: { host: "attacker.example" } }, (r) => {
        r.resume();
        resolve(r.statusCode);
      });
      req.on("error", reject);
      req.end();
    });
    expect(rebound).toBe(421);
    expect(ids).toHaveLength(2);
    worker.child.kill("SIGTERM");
    const end = await worker.done;
    expect(end.code).toBe(0);
    expect(end.stdout).toContain("worker stopped");
  });

  it("refuses a malformed --metrics address before anything is loaded or opened", async () => {
    const dir = tempDir();
    const r = await cli(["worker", join(FIXTURES, "approval.ts"), "--metrics", "localhost:99999"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--metrics "localhost:99999" is not host:port/);
    expect(() => rows(dir, "SELECT 1")).toThrow();
  });
});
