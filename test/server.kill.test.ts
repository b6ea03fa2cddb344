/**
 * A client streaming a run's events over HTTP while the processes under it are SIGKILLed: the
 * worker running the run (another worker resumes it), and the `stead serve` process itself
 * (started again on the same port). The client ends with every event exactly once, in order,
 * as the store's own event rows say, read from the file or database afterwards. Then SIGTERM: the
 * open streams end with a retry hint and the server exits cleanly.
 */
import { createServer } from "node:net";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient, type StreamedEvent } from "../src/client/index.js";
import { requireBuild, spawnCli, until, type CliProcess } from "./cli-helpers.js";
import { useSandbox, type Sandbox } from "./fixtures/crash/harness.js";
import { openSse } from "./helpers/sse.js";
import { withClient } from "./setup/databases.js";
import { STORE_KINDS } from "./helpers/both-stores.js";

beforeAll(requireBuild);

/** A port free now, for a server that must come back on the same one. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** The run's events as the store holds them, read from the file or the database. */
async function storedEvents(store: string, runId: string): Promise<{ seq: number; type: string }[]> {
  if (store.startsWith("postgres")) {
    const rows = await withClient(store, async (c) => (await c.query("SELECT seq, type FROM events WHERE run_id = $1 ORDER BY seq", [runId])).rows as { seq: string; type: string }[]);
    return rows.map((r) => ({ seq: Number(r.seq), type: r.type }));
  }
  const db = new Database(store, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq").all(runId) as { seq: number; type: string }[]).map((r) => ({ seq: Number(r.seq), type: r.type }));
  } finally {
    db.close();
  }
}

describe.each(STORE_KINDS)("a client's event stream across SIGKILLs, on %s", (kind) => {
  let box: Sandbox;
  useSandbox(
    (b) => {
      box = b;
    },
    kind === "postgres" ? { postgres: "server-kill" } : {},
  );
  const servers: CliProcess[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.child.kill("SIGKILL");
      await s.done;
    }
  });

  const serve = async (port: number): Promise<string> => {
    const server = spawnCli(["serve", "--listen", `127.0.0.1:${port}`, "--store", box.store], box.dir, { timeoutMs: 120_000 });
    servers.push(server);
    return until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
  };

  it("the worker and then the server killed mid-run: every event once, in order", async () => {
    const port = await freePort();
    const url = await serve(port);
    const first = box.spawn({ start: [{ id: "kill-run", workflow: "slow" }], leaseMs: 1000, pollMs: 20 }, { slowMs: 60_000 });
    await first.started();

    const got: StreamedEvent[] = [];
    const abort = new AbortController();
    const reading = (async () => {
      for await (const e of createClient({ url }).runs.events("kill-run", { signal: abort.signal, retryMs: 50, maxRetryMs: 200 })) {
        got.push(e);
        if (e.type === "run.completed") return;
      }
    })();
    try {
      await box.waitForEffect((l) => l.runId === "kill-run" && l.stepId === "slow" && l.phase === "start", "the slow step to start");
      await until("the client to see the first step", () => (got.some((e) => e.type === "step.completed") ? true : undefined));
      await first.kill();
      const second = box.spawn({ leaseMs: 1000, pollMs: 20 }, { slowMs: 1500 });
      // The server dies while the second worker takes the run over; the events it writes then are
      // read by the client from the server that comes back.
      const firstServer = servers[0];
      firstServer?.child.kill("SIGKILL");
      await firstServer?.done;
      await box.waitForEffect((l) => l.runId === "kill-run" && l.stepId === "slow" && l.phase === "start" && l.pid === second.pid, "the second worker to run the slow step", 30_000);
      await serve(port);
      await reading;
    } finally {
      abort.abort();
    }
    const stored = await storedEvents(box.store, "kill-run");
    expect(got.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(stored);
    // Both workers' claims are in what the client saw.
    expect(got.filter((e) => e.type === "run.claimed").length).toBeGreaterThanOrEqual(2);

    // SIGTERM, as against SIGKILL: an open stream ends with a retry hint and the server exits 0.
    // The whole store's stream from its first event: the run's own stream ends after its final event.
    const open = await openSse(`${url}/api/v1/events/stream?after=0`);
    await open.waitFor("the run's events", (c) => c.messages.filter((m) => m.event.runId === "kill-run").length === stored.length);
    const last = servers[servers.length - 1];
    last?.child.kill("SIGTERM");
    await open.ended;
    expect(open.comments).toContain("the server is shutting down");
    expect(open.retries.length).toBeGreaterThanOrEqual(2);
    const end = await last?.done;
    expect(end?.code).toBe(0);
    expect(end?.stdout).toContain("server stopped");
  }, 120_000);
});
