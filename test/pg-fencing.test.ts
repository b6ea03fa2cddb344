/**
 * Fencing and takeover across hosts on Postgres, with real worker processes that each claim a
 * different host (STEAD_HOST), so the same-host /proc check never applies:
 * - a worker frozen (SIGSTOP) past its lease keeps its connection, hence its liveness lock: its
 *   runs are taken over by lease expiry on the database clock, and once continued (SIGCONT) none
 *   of its writes is accepted;
 * - a worker killed (SIGKILL) while holding runs under a 60 s lease loses its liveness lock with
 *   its connection: another host's worker takes the runs over at once, not when the lease expires;
 * - a live worker whose liveness connection drops stops its runs at once (lease-lost) and comes
 *   back under a new identity, which takes them over as a gone owner's.
 */
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { type EventView, type RunInfo, type Stead } from "../src/index.js";
import { poll, Sandbox, useSandbox, type Report, type WorkerConfig } from "./fixtures/crash/harness.js";
import { checkRuns, gather, readLog } from "./fixtures/pg/checks.js";
import { withClient } from "./setup/databases.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/pg/workflows.mjs", import.meta.url));
/** Steps s00..s03; s01 is slow (STEAD_TEST_SLOW_MS in the process that runs it) and logs its start. */
const INPUT = { steps: 4, slow: 1 };
const IDS = ["r1", "r2", "r3"];

let box: Sandbox;
let stead: Stead;
useSandbox(
  (b, s) => {
    box = b;
    stead = s;
  },
  { postgres: "fencing" },
);

const config = (extra: WorkerConfig): WorkerConfig => ({ workflows: WORKFLOWS, ack: true, pollMs: 20, ...extra });
const workerIdOf = (reports: readonly Report[]) => reports.flatMap((r) => (r.type === "ready" ? [r.workerId] : []))[0] ?? "";
const stepOut = (s: { output: unknown }) => s.output as { n: string; pid: number; host: string };

/** Waits until the slow step of every run has started in process `pid`. */
function slowStepsStarted(pid: number): Promise<true> {
  return poll(
    () => (IDS.every((id) => readLog(box.log).some((l) => l.runId === id && l.stepId === "s01" && l.phase === "start" && l.pid === pid)) ? true : undefined),
    `the slow steps of ${IDS.join(", ")} to start in pid ${pid}`,
    20_000,
  );
}

async function eventsOf(id: string): Promise<EventView[]> {
  return stead.runs.events({ runId: id });
}

it("a worker frozen past its lease on another host is taken over by lease expiry, and after SIGCONT none of its writes is accepted", async () => {
  const zombie = box.spawn(config({ leaseMs: 1000, concurrency: IDS.length, start: IDS.map((id) => ({ id, workflow: "many", input: INPUT })) }), { host: "zombie-host", slowMs: 2500 });
  await zombie.ready();
  const zombieId = workerIdOf(zombie.reports);
  await slowStepsStarted(zombie.pid);
  const before = new Map<string, RunInfo>();
  for (const id of IDS) before.set(id, await stead.runs.get(id));
  for (const r of before.values()) expect(r.lease).toMatchObject({ owner: zombieId, host: "zombie-host", pid: zombie.pid });
  zombie.child.kill("SIGSTOP");

  const taker = box.spawn(config({ leaseMs: 1000 }), { host: "taker-host", slowMs: 20 });
  await taker.ready();
  const takerId = workerIdOf(taker.reports);
  const done = new Map<string, RunInfo>();
  for (const id of IDS) done.set(id, await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 50 }));

  const eventsAtTakeover = new Map<string, EventView[]>();
  const journalAtTakeover = new Map<string, unknown>();
  for (const id of IDS) {
    const events = await eventsOf(id);
    eventsAtTakeover.set(id, events);
    journalAtTakeover.set(id, await stead.runs.journal(id));
    const fence = before.get(id)?.fence ?? -1;
    const takeover = events.find((e) => e.type === "run.claimed" && e.data.worker === takerId);
    expect(takeover?.data, id).toMatchObject({ previousStatus: "running", fence: fence + 1, host: "taker-host" });
    // The zombie's connection, and so its liveness lock, stayed open; and it is on another host: only the lease's expiry let the run go.
    expect(events.filter((e) => e.type === "lease.expired"), id).toEqual([]);
    const afterTakeover = events.filter((e) => takeover && e.seq > takeover.seq).map((e) => [e.type, e.data.step ?? null]);
    expect(afterTakeover, id).toEqual([
      ["step.completed", "s01"],
      ["step.completed", "s02"],
      ["step.completed", "s03"],
      ["run.completed", null],
    ]);
  }

  zombie.child.kill("SIGCONT");
  // Its slow steps end 2.5 s after they began, whenever the process runs again: each tries to commit and is refused.
  for (const id of IDS) {
    await zombie.waitFor((r) => r.type === "outcome" && r.runId === id, `the zombie's outcome for ${id}`);
    await zombie.waitFor((r) => r.type === "refused" && r.runId === id, `the zombie's write for ${id} to be refused`);
  }
  expect(zombie.outcomes().sort((a, b) => a.runId.localeCompare(b.runId))).toEqual(IDS.map((runId) => ({ runId, kind: "lease-lost" })));
  expect(zombie.reports.filter((r) => r.type === "refused").map((r) => r.type === "refused" && [r.runId, r.reason, r.steps]).sort()).toEqual(
    IDS.map((id) => [id, "lease", ["s01:completed"]]),
  );
  expect(await zombie.terminate()).toEqual({ code: 0, signal: null });
  expect(await taker.terminate()).toEqual({ code: 0, signal: null });

  // Zero writes of the zombie accepted after the takeover: the store is as the taker left it.
  for (const id of IDS) {
    expect(await eventsOf(id), id).toEqual(eventsAtTakeover.get(id));
    expect(await stead.runs.journal(id), id).toEqual(journalAtTakeover.get(id));
    expect(await stead.runs.get(id), id).toMatchObject({ status: "completed", output: done.get(id)?.output, fence: (before.get(id)?.fence ?? -1) + 1 });
    const journal = await stead.runs.journal(id);
    expect(journal.map((s) => [s.id, stepOut(s).pid]), id).toEqual([["s00", zombie.pid], ["s01", taker.pid], ["s02", taker.pid], ["s03", taker.pid]]);
  }
  // Everything the store ever accepted from the zombie was written before it froze.
  const zombieAcked = zombie.reports.flatMap((r) => (r.type === "acked" ? [[r.runId, r.owner, r.steps.map((s) => s.stepId)]] : [])).sort();
  expect(zombieAcked).toEqual(IDS.map((id) => [id, zombieId, ["s00"]]));
  // Its in-flight step did finish (user code runs to its end), and it went no further.
  const zombieLines = readLog(box.log).filter((l) => l.pid === zombie.pid);
  for (const id of IDS) expect(zombieLines.filter((l) => l.runId === id).map((l) => `${l.stepId} ${l.phase}`), id).toEqual(["s00 done", "s01 start", "s01 done"]);
}, 60_000);

it("a worker SIGKILLed on one host loses its runs to a worker on another host through its closed connection, long before its 60 s lease expires", async () => {
  const first = box.spawn(config({ leaseMs: 60_000, concurrency: IDS.length, start: IDS.map((id) => ({ id, workflow: "many", input: INPUT })) }), { host: "host-a", slowMs: 60_000 });
  await first.ready();
  const firstId = workerIdOf(first.reports);
  await slowStepsStarted(first.pid);
  const before = new Map<string, RunInfo>();
  for (const id of IDS) before.set(id, await stead.runs.get(id));
  expect(await first.kill()).toMatchObject({ signal: "SIGKILL" });

  const second = box.spawn(config({ leaseMs: 60_000 }), { host: "host-b", slowMs: 20 });
  await second.ready();
  const secondId = workerIdOf(second.reports);
  for (const id of IDS) await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 50 });

  for (const id of IDS) {
    const was = before.get(id);
    expect(was?.lease, id).toMatchObject({ owner: firstId, host: "host-a", pid: first.pid });
    const events = await eventsOf(id);
    const expired = events.filter((e) => e.type === "lease.expired");
    // One expiry, for the killed worker's fence, because its liveness lock went with its connection (not the /proc check: another host).
    expect(expired.map((e) => e.data), id).toEqual([{ fence: was?.fence, reason: `owner ${firstId} is gone (its database connection closed)` }]);
    const claim = events.find((e) => e.type === "run.claimed" && e.data.worker === secondId);
    expect(claim?.data, id).toMatchObject({ previousStatus: "running", fence: (was?.fence ?? -1) + 1, host: "host-b" });
    expect(claim && expired[0] && claim.seq > expired[0].seq, id).toBe(true);
    // Both times on the database's clock: the takeover happened while the killed lease still had time to run.
    expect(claim?.at, id).toBeLessThan(was?.lease?.expiresAt ?? 0);
    const journal = await stead.runs.journal(id);
    expect(journal.map((s) => [s.id, s.status, stepOut(s).host]), id).toEqual([
      ["s00", "completed", "host-a"],
      ["s01", "completed", "host-b"],
      ["s02", "completed", "host-b"],
      ["s03", "completed", "host-b"],
    ]);
  }
  // The killed worker's slow steps began and never ended; the other host ran each once.
  const log = readLog(box.log);
  for (const id of IDS) {
    expect(log.filter((l) => l.runId === id && l.stepId === "s01").map((l) => [l.pid, l.phase]), id).toEqual([
      [first.pid, "start"],
      [second.pid, "start"],
      [second.pid, "done"],
    ]);
  }
  expect(await second.terminate()).toEqual({ code: 0, signal: null });
}, 60_000);

it("a worker whose liveness connection drops ends its runs at once (lease-lost) and takes them back under a new identity", async () => {
  const ids = ["d1", "d2", "d3"];
  const input = { steps: 8, delayMs: 150, effectEvery: 4 };
  const w = box.spawn(config({ leaseMs: 30_000, concurrency: ids.length, start: ids.map((id) => ({ id, workflow: "many", input })) }), { host: "drop-host" });
  await w.ready();
  const firstId = workerIdOf(w.reports);
  await poll(() => (w.reports.filter((r) => r.type === "acked").length >= ids.length ? true : undefined), "a step of each run to commit", 20_000);

  // Only the liveness connection goes: the database and the worker's pool stay up.
  const terminated = await withClient(box.store, async (c) => {
    const res = await c.query<{ pid: number }>(
      `SELECT pg_terminate_backend(l.pid), l.pid FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND l.classid = ((hashtextextended($1, 0) >> 32) & 4294967295)::oid
         AND l.objid = (hashtextextended($1, 0) & 4294967295)::oid`,
      [firstId],
    );
    return res.rows.length;
  });
  expect(terminated).toBe(1);
  for (const id of ids) await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 50 });
  expect(await w.terminate()).toEqual({ code: 0, signal: null });

  // Each run's execution under the lost identity ended as lease-lost; a new identity of the same process finished it.
  const outcomes = w.reports.flatMap((r) => (r.type === "outcome" ? [[r.runId, r.outcome.kind]] : []));
  for (const id of ids) expect(outcomes.filter(([runId]) => runId === id), id).toEqual([[id, "lease-lost"], [id, "completed"]]);
  const identities = [...new Set(w.reports.flatMap((r) => (r.type === "claimed" ? [r.workerId] : [])))];
  expect(identities).toHaveLength(2);
  expect(identities[0]).toBe(firstId);
  for (const id of ids) {
    const events = await eventsOf(id);
    const expired = events.filter((e) => e.type === "lease.expired");
    expect(expired.map((e) => e.data), id).toEqual([{ fence: 1, reason: `owner ${firstId} is gone (its database connection closed)` }]);
    const claims = events.filter((e) => e.type === "run.claimed").map((e) => [e.data.worker, e.data.fence, e.data.previousStatus]);
    expect(claims, id).toEqual([
      [firstId, 1, "pending"],
      [identities[1], 2, "running"],
    ]);
  }
  const { journals, outputs, events } = await gather(stead, ids);
  const { problems } = checkRuns({ runIds: ids, steps: input.steps, effectEvery: input.effectEvery, journals, outputs, events, log: readLog(box.log), workers: [w], killed: new Set() });
  expect(problems).toEqual([]);
}, 60_000);
