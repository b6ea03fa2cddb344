/**
 * Wake-ups: an answer that makes a run claimable reaches a running worker at once, not at its next
 * poll. Each worker here polls every POLL_MS; the run's next step must be done (its side effect in
 * the log, its row in the journal) before that poll could have fired. The poll's earliest time is
 * taken from the worker itself: its last tick ends after it reports the run parked, and the next
 * tick is POLL_MS after that. An ordering proof with a generous margin, not a timing benchmark.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Worker } from "../src/index.js";
import { STORE_KINDS, type StoreKind } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { waitUntil } from "./helpers/waiting.js";
import { cli, requireBuild, tempDir } from "./cli-helpers.js";
import { withClient } from "./setup/databases.js";

const POLL_MS = 20_000;
/** Time left unused before the poll's earliest firing: a loaded machine's slack. */
const MARGIN_MS = 4_000;

let served: Served | undefined;
let worker: Worker | undefined;
afterEach(async () => {
  worker?.abortAll();
  worker = undefined;
  await served?.close();
  served = undefined;
});

function shipFlow(log: string) {
  return workflow("wake-ship", async (ctx, input: { item: string }) => {
    await ctx.step("prepare", () => `prepared ${input.item}`);
    const d = await ctx.approval("ship", { item: input.item });
    return ctx.step("ship-it", () => {
      appendFileSync(log, `${input.item} shipped by ${d.by}\n`);
      return d.approved;
    });
  });
}

/**
 * Serves a store, starts a slow-polling worker, parks a run at its approval; returns when the
 * worker polls next at the earliest. A first run, there before the worker, is claimed by its
 * start; the second is started once the worker has gone idle, so only a wake-up claims it in time.
 */
async function parkedUnderSlowWorker(kind: StoreKind, label: string): Promise<{ s: Served; id: string; pollDue: number }> {
  const s = await servedStore(kind, label);
  served = s;
  const flow = shipFlow(s.log);
  const w = s.s.stead.worker({ definitions: [flow], pollMs: POLL_MS, graceMs: 200 });
  worker = w;
  w.on("error", () => undefined);
  const parkedAt = new Map<string, number>();
  w.on("outcome", (id, o) => o.kind === "waiting" && parkedAt.set(id, Date.now()));
  const first = await s.s.stead.runs.start(flow, { item: "first" });
  w.start();
  const idleSince = await waitUntil("the first run parked", () => parkedAt.get(first.id));
  // The tick that follows a parking must be over first, or it claims the next run by itself. This
  // settling only lets the test see a missing wake-up; the deadline below is from the parking.
  await new Promise((r) => setTimeout(r, 1_000));
  const { id } = await s.s.stead.runs.start(flow, { item: "parcel" });
  const parked = await waitUntil("the second run parked", () => parkedAt.get(id), { timeoutMs: Math.max(0, idleSince + POLL_MS - MARGIN_MS - Date.now()) }).catch(() => {
    throw new Error(`a run started while the worker was idle was not claimed before its poll (${POLL_MS} ms) would have fired: the start did not wake the worker`);
  });
  expect((await s.s.rows("SELECT status FROM runs WHERE id = ?", id))[0]?.status).toBe("waiting");
  return { s, id, pollDue: parked + POLL_MS };
}

/** Waits for the step after the approval, from the world: the log line and the journal row; fails if the poll could have fired first. */
async function nextStepDoneBefore(s: Served, id: string, pollDue: number): Promise<void> {
  const left = pollDue - MARGIN_MS - Date.now();
  expect(left, "the approval itself took longer than the poll interval: the test proves nothing on this machine").toBeGreaterThan(0);
  await waitUntil(
    "the step after the approval",
    async () => existsSync(s.log) && (await s.s.rows("SELECT status FROM steps WHERE run_id = ? AND step_id = 'ship-it'", id))[0]?.status === "completed",
    { timeoutMs: left },
  ).catch(() => {
    throw new Error(`the next step was not done before the worker's poll (${POLL_MS} ms) would have fired: the approval did not wake the worker`);
  });
  expect(readFileSync(s.log, "utf8")).toBe("parcel shipped by olivia\n");
}

describe.each(STORE_KINDS)("wake-ups on %s", (kind) => {
  it("an approval over HTTP to a server sharing the worker's process: the next step is done before the poll would have fired", async () => {
    const { s, id, pollDue } = await parkedUnderSlowWorker(kind, "wake-http");
    const res = await fetch(`${s.server.url}/api/v1/runs/${id}/waits/ship/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.tokens.operator}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    await nextStepDoneBefore(s, id, pollDue);
  });
});

describe("wake-ups on postgres across processes", () => {
  beforeAll(requireBuild);

  it("an approval by another process (`stead approve`): the next step is done before the poll would have fired", async () => {
    const { s, id, pollDue } = await parkedUnderSlowWorker("postgres", "wake-cli");
    const approved = await cli(["approve", id, "ship", "--by", "olivia", "--store", s.s.location], tempDir());
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    await nextStepDoneBefore(s, id, pollDue);
  });

  it("a worker whose listening connection is cut reconnects, and wake-ups reach it again: the next step is done before the poll would have fired", async () => {
    const { s, id } = await parkedUnderSlowWorker("postgres", "wake-reconnect");
    const w = worker as Worker;
    const before = w.owner.workerId;
    const lockedBy = (c: import("pg").ClientBase, workerId: string, terminate: boolean) =>
      c.query(
        `SELECT ${terminate ? "pg_terminate_backend(l.pid)" : "l.pid"} FROM pg_locks l
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = ((hashtextextended($1, 0) >> 32) & 4294967295)::oid
           AND l.objid = (hashtextextended($1, 0) & 4294967295)::oid`,
        [workerId],
      );
    expect((await withClient(s.s.location, (c) => lockedBy(c, before, true))).rowCount, "the backend listening for the worker").toBe(1);
    // Its next poll is POLL_MS after the tick that follows its new LISTEN, which comes after the cut.
    const pollDue = Date.now() + POLL_MS;
    await waitUntil("the worker to listen again under a new identity", async () => w.owner.workerId !== before && (await withClient(s.s.location, (c) => lockedBy(c, w.owner.workerId, false))).rowCount === 1);
    const res = await fetch(`${s.server.url}/api/v1/runs/${id}/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${s.tokens.operator}`, "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    await nextStepDoneBefore(s, id, pollDue);
  });
});
