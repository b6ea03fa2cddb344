/**
 * The Store conformance suite: every Store implementation (SQLite, Postgres) must pass it unchanged.
 * It speaks only the `Store` interface (src/store/types.ts), never a dialect's tables or SQL.
 *
 *   describeStoreConformance("sqlite", async () => ({ store, cleanup, reopen }));
 *
 * The factory returns a fresh, migrated, empty store. `reopen` (optional) returns a second Store
 * instance on the same backing storage, as a second process would see it; without it the
 * concurrent-claim case is skipped and says why.
 *
 * Cases about lease expiry run on the store's `leaseClock` (see lease-clock.ts): virtual time and
 * exact lease ends for a "caller" clock, real waits and lease ends within the call's span for a
 * "store" clock. Timers (`dueTimers(now)`) use the caller's `now` on every store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BlobWrite, Mutation, NewRun, Owner, RunRow, RunStatus, SnapshotWrite, StepKind, StepWrite, Store, UnitResult, WaitKind } from "../../src/store/types.js";
import { clockFor, type SuiteClock } from "./lease-clock.js";

export interface StoreUnderTest {
  store: Store;
  cleanup(): Promise<void>;
  /** Another Store instance on the same storage; closed by the suite. */
  reopen?(): Promise<Store>;
}

export type StoreFactory = () => Promise<StoreUnderTest>;

const DEF_A = "def-a";
const DEF_B = "def-b";
/**
 * A lease no case waits out: it holds for the whole case on either clock, even on a loaded
 * machine where a case's real time (the store clock) runs to seconds.
 */
const LEASE = 60_000;

function owner(workerId: string, host = "host-1", pid = 4242): Owner {
  return { workerId, host, pid, start: `proc:${pid}00` };
}

function newRun(id: string, over: Partial<NewRun> = {}): NewRun {
  return { id, definition: DEF_A, module: null, fingerprint: "fp-1", input: JSON.stringify({ id }), createdAt: Date.now(), ...over };
}

function step(seq: number, stepId: string, over: Partial<StepWrite> = {}): StepWrite {
  return { seq, stepId, kind: "step", status: "completed", attempt: 1, output: JSON.stringify(stepId), startedAt: 1_000 + seq, completedAt: 2_000 + seq, ...over };
}

function fenced(runId: string, fence: number, workerId: string, m: Omit<Mutation, "runId" | "expect"> = {}): Mutation {
  return { runId, expect: { lease: { fence, owner: workerId } }, ...m };
}

async function commitOne(store: Store, unit: Mutation[]): Promise<UnitResult> {
  const results = await store.commit([unit]);
  expect(results).toHaveLength(1);
  return results[0] as UnitResult;
}

/** Everything the store holds about one run, to prove a refused write changed nothing. */
async function snapshot(store: Store, runId: string) {
  return {
    run: await store.getRun(runId),
    journal: await store.journal(runId),
    waits: await store.waits(runId),
    holds: await store.holds({ runId }),
    events: await store.events({ runId }),
    children: await store.listRuns({ parentId: runId }),
  };
}

export function describeStoreConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: Store;
    let clock: SuiteClock;
    const extra: Store[] = [];

    beforeEach(async () => {
      sut = await factory();
      store = sut.store;
      clock = clockFor(store);
    });

    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close();
      await sut.cleanup();
    });

    async function created(id: string, over: Partial<NewRun> = {}): Promise<void> {
      await store.createRun(newRun(id, over), [{ type: "run.created", data: { id } }]);
    }

    /** Claims run `id` for `workerId` at `now`; returns the fence it got. */
    async function claimed(id: string, workerId: string, now: number, o: Owner = owner(workerId), leaseMs = LEASE): Promise<number> {
      const got = await store.claim({ owner: o, definitions: [DEF_A, DEF_B], limit: 1, leaseMs, now, runIds: [id] });
      expect(got.map((c) => c.run.id)).toEqual([id]);
      return got[0]?.run.fence ?? -1;
    }

    async function setStatus(id: string, status: RunRow["status"]): Promise<void> {
      expect(await commitOne(store, [{ runId: id, run: { status } }])).toMatchObject({ ok: true });
    }

    describe("schema", () => {
      it("migrate() is idempotent and keeps existing data", async () => {
        const before = await store.check();
        await created("r1");
        await store.migrate();
        await store.migrate();
        expect(await store.getRun("r1")).toMatchObject({ id: "r1", status: "pending" });
        expect(await store.check()).toEqual(before);
      });

      it("check() on a migrated store reports dialect, location and schema version", async () => {
        const info = await store.check();
        expect(info.dialect).toBe(store.dialect);
        expect(info.location).toBe(store.location);
        expect(Number.isInteger(info.schemaVersion)).toBe(true);
        expect(info.schemaVersion).toBeGreaterThanOrEqual(1);
      });

      it("close() is idempotent", async () => {
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
      });
    });

    describe("runs", () => {
      it("createRun + getRun round-trip every field", async () => {
        const full: NewRun = {
          id: "full-1",
          definition: DEF_B,
          module: "/abs/path/flow.ts",
          fingerprint: "fp-xyz",
          input: JSON.stringify({ a: [1, "two", null], b: "é∂" }),
          parentId: "parent-1",
          parentStepId: "kid",
          status: "paused",
          workspace: "/work/repo é",
          createdAt: 1_700_000_000_123,
        };
        await store.createRun(full, []);
        const row = await store.getRun("full-1");
        expect(row).toEqual({
          id: "full-1",
          definition: DEF_B,
          module: "/abs/path/flow.ts",
          fingerprint: "fp-xyz",
          status: "paused",
          input: full.input,
          output: null,
          error: null,
          parentId: "parent-1",
          parentStepId: "kid",
          fence: 0,
          leaseOwner: null,
          leaseExpiresAt: null,
          ownerHost: null,
          ownerPid: null,
          ownerStart: null,
          lostClaims: 0,
          pauseRequested: false,
          sessionId: null,
          turn: null,
          workspace: "/work/repo é",
          createdAt: 1_700_000_000_123,
          updatedAt: expect.any(Number) as number,
        });

        await store.createRun({ id: "min-1", definition: DEF_A, module: null, fingerprint: null, input: "null", createdAt: 5 }, []);
        expect(await store.getRun("min-1")).toMatchObject({ status: "pending", fingerprint: null, module: null, parentId: null, parentStepId: null, input: "null", workspace: null });
        expect(await store.getRun("nope")).toBeUndefined();
      });

      it("refuses a duplicate run id and changes nothing", async () => {
        await store.createRun(newRun("dup", { input: '"first"' }), [{ type: "run.created" }]);
        const before = await snapshot(store, "dup");
        await expect(store.createRun(newRun("dup", { input: '"second"', definition: DEF_B }), [{ type: "run.created", data: { again: true } }])).rejects.toThrow();
        expect(await snapshot(store, "dup")).toEqual(before);
        expect(await store.listRuns()).toHaveLength(1);
      });

      it("createRun writes the journal rows it is given, ordered by seq", async () => {
        const rows = [step(1, "b", { kind: "effect", status: "failed", output: null, error: '{"message":"x"}' }), step(0, "a")];
        await store.createRun(newRun("j1", { journal: rows }), []);
        const journal = await store.journal("j1");
        expect(journal.map((s) => s.seq)).toEqual([0, 1]);
        expect(journal[0]).toEqual({ runId: "j1", seq: 0, stepId: "a", kind: "step", status: "completed", attempt: 1, output: '"a"', error: null, startedAt: 1_000, completedAt: 2_000, checkpoint: null });
        expect(journal[1]).toEqual({ runId: "j1", seq: 1, stepId: "b", kind: "effect", status: "failed", attempt: 1, output: null, error: '{"message":"x"}', startedAt: 1_001, completedAt: 2_001, checkpoint: null });
      });

      it("listRuns filters by status, definition and parent, and honours limit", async () => {
        await created("p1");
        await created("p2", { definition: DEF_B });
        await created("c1", { parentId: "p1", parentStepId: "s" });
        await created("c2", { parentId: "p1", parentStepId: "t", definition: DEF_B });
        await created("c3", { parentId: "p2", parentStepId: "s" });
        await setStatus("c2", "waiting");
        await setStatus("p2", "completed");
        const ids = (rows: RunRow[]) => rows.map((r) => r.id).sort();
        expect(ids(await store.listRuns())).toEqual(["c1", "c2", "c3", "p1", "p2"]);
        expect(ids(await store.listRuns({ status: ["waiting", "completed"] }))).toEqual(["c2", "p2"]);
        expect(ids(await store.listRuns({ definition: DEF_B }))).toEqual(["c2", "p2"]);
        expect(ids(await store.listRuns({ parentId: "p1" }))).toEqual(["c1", "c2"]);
        expect(ids(await store.listRuns({ parentId: "p1", status: ["pending"], definition: DEF_A }))).toEqual(["c1"]);
        expect(await store.listRuns({ limit: 2 })).toHaveLength(2);
        expect(await store.listRuns({ parentId: "nobody" })).toEqual([]);
      });

      it("countRuns counts what listRuns would list without a limit, under the same filters", async () => {
        expect(await store.countRuns()).toBe(0);
        for (let i = 0; i < 7; i++) await created(`r${i}`);
        await created("b1", { definition: DEF_B });
        await created("k1", { parentId: "r0", parentStepId: "s" });
        await created("t1", { sessionId: "sess-1" });
        await created("t2", { sessionId: "sess-1" });
        await setStatus("r1", "waiting");
        await setStatus("b1", "completed");
        expect(await store.countRuns()).toBe(11);
        expect(await store.countRuns({ status: ["waiting", "completed"] })).toBe(2);
        expect(await store.countRuns({ status: ["pending"] })).toBe(9);
        expect(await store.countRuns({ definition: DEF_B })).toBe(1);
        expect(await store.countRuns({ parentId: "r0" })).toBe(1);
        expect(await store.countRuns({ sessionId: "sess-1" })).toBe(2);
        expect(await store.countRuns({ definition: DEF_A, status: ["pending"] })).toBe(9);
        expect(await store.countRuns({ parentId: "nobody" })).toBe(0);
        expect(await store.countRuns({ status: [] })).toBe(11);
        // Far more than listRuns's default page: the count has no limit.
        for (let i = 0; i < 1_005; i += 201) {
          const kids = Array.from({ length: 201 }, (_, j) => newRun(`bulk-${i + j}`, { parentId: "r0", parentStepId: `s${i + j}` }));
          expect(await commitOne(store, [{ runId: "r0", newRuns: kids }])).toMatchObject({ ok: true });
        }
        expect(await store.countRuns({ parentId: "r0" })).toBe(1 + 1_005);
        expect(await store.listRuns({ parentId: "r0" })).toHaveLength(1_000);
      });
    });

    describe("workspace snapshots and blobs", () => {
      const blob = (text: string, hash = `h-${text}`): BlobWrite => ({ hash, size: text.length * 2, data: Buffer.from(text, "utf8") });
      const snap = (seq: number, over: Partial<SnapshotWrite> = {}): SnapshotWrite => ({
        seq,
        stepId: seq < 0 ? null : `s${seq}`,
        source: seq < 0 ? "start" : "step",
        root: `root-${seq}`,
        files: 3,
        bytes: 300,
        filesChanged: 1,
        newBytes: 40,
        notes: null,
        checkpoint: null,
        createdAt: 1_700_000_000_000 + seq,
        ...over,
      });

      it("putBlobs inserts if absent: a second write of a hash keeps the first content; getBlobs leaves out absent hashes", async () => {
        await store.putBlobs([blob("alpha"), blob("beta")]);
        await store.putBlobs([blob("not alpha", "h-alpha"), blob("gamma")]);
        const got = (await store.getBlobs(["h-alpha", "h-gamma", "h-nope"])).sort((a, b) => a.hash.localeCompare(b.hash));
        expect(got.map((b) => [b.hash, b.size, b.data.toString("utf8")])).toEqual([
          ["h-alpha", 10, "alpha"],
          ["h-gamma", 10, "gamma"],
        ]);
        expect(Buffer.isBuffer(got[0]?.data)).toBe(true);
        const bytes = Buffer.from([0, 255, 1, 254, 10, 13]);
        await store.putBlobs([{ hash: "bin", size: 99, data: bytes }]);
        expect((await store.getBlobs(["bin"]))[0]?.data.equals(bytes)).toBe(true);
      });

      it("missingBlobs returns exactly the absent hashes, once each", async () => {
        await store.putBlobs([blob("a"), blob("b")]);
        expect((await store.missingBlobs(["h-a", "h-x", "h-b", "h-y", "h-x"])).sort()).toEqual(["h-x", "h-y"]);
        expect(await store.missingBlobs([])).toEqual([]);
        expect(await store.missingBlobs(["h-a"])).toEqual([]);
      });

      it("a snapshot commits with its step under the lease; a refused write leaves no snapshot", async () => {
        await created("r1");
        const t = clock.now();
        const fence = await claimed("r1", "w1", t);
        expect(await commitOne(store, [fenced("r1", fence, "w1", { steps: [step(0, "s0")], snapshots: [snap(0)] })])).toEqual({ ok: true, pauseRequested: false });
        expect(await store.snapshots("r1")).toEqual([{ id: expect.any(Number) as number, runId: "r1", ...snap(0) }]);
        const before = await store.snapshots("r1");
        expect(await commitOne(store, [fenced("r1", fence + 1, "w1", { steps: [step(1, "s1")], snapshots: [snap(1)] })])).toMatchObject({ ok: false, reason: "lease" });
        // In one batch: the refused unit's snapshot is not written, the other unit's is.
        await created("r2");
        const results = await store.commit([
          [fenced("r1", fence, "w2", { steps: [step(1, "s1")], snapshots: [snap(1)] })],
          [{ runId: "r2", snapshots: [snap(-1, { root: "r2-start" })] }],
        ]);
        expect(results.map((r) => r.ok)).toEqual([false, true]);
        expect(await store.snapshots("r1")).toEqual(before);
        expect((await store.snapshots("r2")).map((s) => [s.seq, s.source, s.stepId, s.root])).toEqual([[-1, "start", null, "r2-start"]]);
        expect(await store.journal("r1")).toHaveLength(1);
      });

      it("refuses snapshots on an optional mutation, writing nothing of the batch", async () => {
        await created("r1");
        await created("r2");
        const before = await snapshot(store, "r2");
        await expect(
          store.commit([[{ runId: "r2", events: [{ type: "x" }] }], [{ runId: "r1", optional: true, snapshots: [snap(0)] }]]),
        ).rejects.toMatchObject({ code: "STEAD_INVALID_MUTATION" });
        expect(await store.snapshots("r1")).toEqual([]);
        expect(await snapshot(store, "r2")).toEqual(before);
      });

      it("lists a run's snapshots by seq; a step snapshot at a seq replaces the previous one, settle snapshots accumulate", async () => {
        await created("r1");
        await created("other");
        await commitOne(store, [{ runId: "r1", snapshots: [snap(-1), snap(0), snap(2, { source: "settle", root: "settle-a" })] }]);
        await commitOne(store, [{ runId: "r1", snapshots: [snap(2, { source: "settle", root: "settle-b" }), snap(1)] }]);
        await commitOne(store, [{ runId: "r1", snapshots: [snap(0, { root: "root-0-again", stepId: "s0-again", filesChanged: 7, notes: '["n"]', checkpoint: '{"k":"v"}' })] }]);
        await commitOne(store, [{ runId: "other", snapshots: [snap(0, { root: "elsewhere" })] }]);
        const list = await store.snapshots("r1");
        expect(list.map((s) => [s.seq, s.source, s.root])).toEqual([
          [-1, "start", "root--1"],
          [0, "step", "root-0-again"],
          [1, "step", "root-1"],
          [2, "settle", "settle-a"],
          [2, "settle", "settle-b"],
        ]);
        expect(list[1]).toMatchObject({ stepId: "s0-again", filesChanged: 7, notes: '["n"]', checkpoint: '{"k":"v"}' });
        expect(await store.getSnapshot("r1", { seq: 0 })).toMatchObject({ root: "root-0-again" });
        expect(await store.getSnapshot("r1", { seq: -1 })).toMatchObject({ source: "start" });
        expect(await store.getSnapshot("r1", { seq: 2 })).toBeUndefined();
        expect(await store.getSnapshot("r1", { stepId: "s1" })).toMatchObject({ seq: 1, root: "root-1" });
        expect(await store.getSnapshot("r1", { stepId: "nope" })).toBeUndefined();
        expect((await store.snapshotRoots()).sort()).toEqual(["elsewhere", "root--1", "root-0-again", "root-1", "settle-a", "settle-b"]);
      });

      it("a run created through newRuns keeps its workspace", async () => {
        await created("parent", { workspace: "/ws/parent" });
        await commitOne(store, [{ runId: "parent", newRuns: [newRun("kid", { parentId: "parent", workspace: "/ws/kid" }), newRun("plain", { parentId: "parent" })] }]);
        expect(await store.getRun("parent")).toMatchObject({ workspace: "/ws/parent" });
        expect(await store.getRun("kid")).toMatchObject({ workspace: "/ws/kid", parentId: "parent" });
        expect(await store.getRun("plain")).toMatchObject({ workspace: null });
      });

      it("pruneSnapshots keeps each terminal run's last N step snapshots (and what follows them) and never touches other runs", async () => {
        for (const id of ["done", "short", "live", "failed"]) await created(id);
        const five = [snap(-1), snap(0), snap(1), snap(1, { source: "settle", root: "mid" }), snap(2), snap(3), snap(4)];
        for (const id of ["done", "live", "failed"]) await commitOne(store, [{ runId: id, snapshots: five }]);
        await commitOne(store, [{ runId: "short", snapshots: [snap(-1), snap(0)] }]);
        await setStatus("done", "completed");
        await setStatus("short", "completed");
        await setStatus("failed", "failed");
        expect(await store.pruneSnapshots(2)).toBe(5 + 5);
        const left = async (id: string) => (await store.snapshots(id)).map((s) => `${s.seq}${s.source[1] ?? ""}`);
        expect(await left("done")).toEqual(["3t", "4t"]);
        expect(await left("failed")).toEqual(["3t", "4t"]);
        expect(await left("short")).toEqual(["-1t", "0t"]);
        expect((await store.snapshots("live")).length).toBe(7);
        expect(await store.pruneSnapshots(2)).toBe(0);
        expect(await store.pruneSnapshots(0)).toBe(2 + 2 + 2);
        expect(await store.snapshots("done")).toEqual([]);
        expect((await store.snapshots("live")).length).toBe(7);
      });

      it("deleteBlobs removes only blobs last touched before the cutoff; listBlobs pages them by hash", async () => {
        await store.putBlobs([blob("old1"), blob("old2"), blob("old3")]);
        const cutoff = await store.storeTime();
        // The store's clock has ms resolution: step past the cutoff before the next writes.
        while ((await store.storeTime()) <= cutoff) await new Promise((r) => setTimeout(r, 2));
        await store.putBlobs([blob("new1")]);
        const page1 = await store.listBlobs(null, 2, cutoff + 1);
        const page2 = await store.listBlobs(page1[page1.length - 1]?.hash ?? null, 2, cutoff + 1);
        expect([...page1, ...page2].map((b) => b.hash)).toEqual(["h-old1", "h-old2", "h-old3"]);
        expect(page1[0]).toEqual({ hash: "h-old1", size: 8, stored: 4 });
        expect(await store.deleteBlobs(["h-old1", "h-new1", "h-absent"], cutoff + 1)).toEqual({ count: 1, bytes: 4 });
        expect((await store.missingBlobs(["h-old1", "h-old2", "h-new1"])).sort()).toEqual(["h-old1"]);
        const later = await store.storeTime();
        expect((await store.listBlobs(null, 10, later + 1)).map((b) => b.hash)).toEqual(["h-new1", "h-old2", "h-old3"]);
      });
    });

    describe("events", () => {
      it("are numbered in increasing order, in the order written, with their data", async () => {
        await store.createRun(newRun("e1"), [{ type: "run.created", data: { n: 1 } }, { type: "second" }]);
        await created("e2");
        await store.commit([
          [{ runId: "e1", events: [{ type: "third", data: { nested: { ok: true } } }] }],
          [{ runId: "e2", events: [{ type: "fourth" }, { type: "fifth" }] }],
        ]);
        const all = await store.events();
        expect(all.map((e) => [e.runId, e.type])).toEqual([
          ["e1", "run.created"],
          ["e1", "second"],
          ["e2", "run.created"],
          ["e1", "third"],
          ["e2", "fourth"],
          ["e2", "fifth"],
        ]);
        for (let i = 1; i < all.length; i++) expect(all[i]?.seq).toBeGreaterThan(all[i - 1]?.seq ?? Infinity);
        expect(JSON.parse(all[0]?.data ?? "")).toEqual({ n: 1 });
        expect(JSON.parse(all[1]?.data ?? "")).toEqual({});
        expect(JSON.parse(all[3]?.data ?? "")).toEqual({ nested: { ok: true } });
        expect(all.every((e) => typeof e.at === "number" && e.at > 0)).toBe(true);
      });

      it("are written in the same transaction as their change: a refused unit writes none", async () => {
        await created("e1");
        const before = await store.events();
        const r = await commitOne(store, [
          { runId: "e1", run: { output: '"x"' }, events: [{ type: "first.change" }] },
          { runId: "e1", expect: { status: ["waiting"] }, run: { status: "running" }, events: [{ type: "second.change" }] },
        ]);
        expect(r).toMatchObject({ ok: false, reason: "status", runId: "e1" });
        expect(await store.events()).toEqual(before);
        expect((await store.getRun("e1"))?.output).toBeNull();
      });

      it("filter by run, after a sequence number, and limit", async () => {
        await created("a");
        await created("b");
        await store.commit([[{ runId: "a", events: [{ type: "a.1" }, { type: "a.2" }] }], [{ runId: "b", events: [{ type: "b.1" }] }]]);
        const all = await store.events();
        expect((await store.events({ runId: "a" })).map((e) => e.type)).toEqual(["run.created", "a.1", "a.2"]);
        // all: a run.created, b run.created, a.1, a.2, b.1
        const cut = all[1]?.seq ?? -1;
        expect((await store.events({ afterSeq: cut })).map((e) => e.seq)).toEqual(all.slice(2).map((e) => e.seq));
        expect((await store.events({ runId: "a", afterSeq: cut })).map((e) => e.type)).toEqual(["a.1", "a.2"]);
        expect((await store.events({ limit: 2 })).map((e) => e.seq)).toEqual(all.slice(0, 2).map((e) => e.seq));
        expect((await store.events({ runId: "b", afterSeq: cut, limit: 1 })).map((e) => e.type)).toEqual(["b.1"]);
      });
    });

    describe("claims", () => {
      it("claims only pending runs (or running with an expired lease) of the given definitions", async () => {
        const t = clock.now();
        await created("a-pending");
        await created("b-pending", { definition: DEF_B });
        await created("a-paused", { status: "paused" });
        for (const [id, status] of [["a-waiting", "waiting"], ["a-held", "held"], ["a-completed", "completed"], ["a-failed", "failed"], ["a-cancelled", "cancelled"]] as const) {
          await created(id);
          await setStatus(id, status);
        }
        await created("a-live");
        await claimed("a-live", "other", t);

        const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 100, leaseMs: LEASE, now: t + 10 });
        expect(got.map((c) => c.run.id)).toEqual(["a-pending"]);
        const more = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 100, leaseMs: LEASE, now: t + 20 });
        expect(more.map((c) => c.run.id)).toEqual(["b-pending"]);
        expect(await store.claim({ owner: owner("w1"), definitions: ["def-unknown"], limit: 100, leaseMs: LEASE, now: t + LEASE * 10 })).toEqual([]);
        expect(await store.claim({ owner: owner("w1"), definitions: [], limit: 100, leaseMs: LEASE, now: t + LEASE * 10 })).toEqual([]);
      });

      it("sets the lease and owner, grows the fence by one, reports the previous status, and writes run.claimed", async () => {
        await created("r1", { journal: [step(0, "done-before")] });
        const o = owner("w1", "host-9", 777);
        const {
          value: [c],
          at,
        } = await clock.span((now) => store.claim({ owner: o, definitions: [DEF_A], limit: 5, leaseMs: LEASE, now }));
        expect(c?.previousStatus).toBe("pending");
        expect(c?.run).toMatchObject({ id: "r1", status: "running", fence: 1, leaseOwner: "w1", ownerHost: "host-9", ownerPid: 777, ownerStart: o.start, lostClaims: 0 });
        clock.expectLeaseEnd(c?.run.leaseExpiresAt, at, LEASE);
        expect(c?.journal.map((s) => s.stepId)).toEqual(["done-before"]);
        expect(await store.getRun("r1")).toEqual(c?.run);
        const types = (await store.events({ runId: "r1" })).map((e) => e.type);
        expect(types).toEqual(["run.created", "run.claimed"]);
      });

      it("reclaims a running run only after its lease expired, counting a lost claim; the fence grows by exactly 1 per claim", async () => {
        const lease = clock.lease;
        await created("r1");
        expect(await claimed("r1", "w1", clock.now(), owner("w1"), lease)).toBe(1);

        await clock.advance(lease / 2);
        expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 5, leaseMs: lease, now: clock.now() })).toEqual([]);

        await clock.advance(lease / 2 + clock.epsilon);
        const {
          value: [c2],
          at,
        } = await clock.span((now) => store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 5, leaseMs: lease, now }));
        expect(c2?.previousStatus).toBe("running");
        expect(c2?.run).toMatchObject({ fence: 2, leaseOwner: "w2", lostClaims: 1 });
        clock.expectLeaseEnd(c2?.run.leaseExpiresAt, at, lease);

        // Handed back as pending: the next claim is not a lost one.
        expect(await commitOne(store, [fenced("r1", 2, "w2", { run: { status: "pending", releaseLease: true } })])).toMatchObject({ ok: true });
        await clock.advance(1);
        const [c3] = await store.claim({ owner: owner("w3"), definitions: [DEF_A], limit: 5, leaseMs: LEASE, now: clock.now() });
        expect(c3?.previousStatus).toBe("pending");
        expect(c3?.run).toMatchObject({ fence: 3, leaseOwner: "w3", lostClaims: 1 });
      });

      it("claims only the listed runIds when given", async () => {
        const t = clock.now();
        for (const id of ["r1", "r2", "r3"]) await created(id);
        const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t, runIds: ["r2", "not-a-run"] });
        expect(got.map((c) => c.run.id)).toEqual(["r2"]);
        expect(await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t, runIds: [] })).toEqual([]);
        expect((await store.getRun("r1"))?.status).toBe("pending");
        expect((await store.getRun("r3"))?.status).toBe("pending");
      });

      it("claimable lists what claim would take (same rule, order, limit and runIds), with journals and current status, changing nothing", async () => {
        const lease = clock.lease;
        await created("a-expired");
        await claimed("a-expired", "gone", clock.now(), owner("gone"), lease);
        await clock.advance(lease + clock.epsilon);
        await created("a-1", { journal: [step(0, "done-before")] });
        await created("a-2");
        await created("b-1", { definition: DEF_B });
        await created("a-held");
        await setStatus("a-held", "held");
        await created("a-live");
        await claimed("a-live", "other", clock.now());
        // A session's second turn waits for its first.
        await created("s-1", { sessionId: "S" });
        await created("s-2", { sessionId: "S" });
        const ids = ["a-expired", "a-1", "a-2", "b-1", "a-held", "a-live", "s-1", "s-2"];
        const before = await Promise.all(ids.map((id) => snapshot(store, id)));

        const now = clock.now();
        const all = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now });
        expect(all.map((c) => c.run.id).sort()).toEqual(["a-1", "a-2", "a-expired", "b-1", "s-1"]);
        expect(all.find((c) => c.run.id === "a-expired")).toMatchObject({ previousStatus: "running", run: { status: "running", fence: 1, leaseOwner: "gone" } });
        expect(all.find((c) => c.run.id === "a-1")).toMatchObject({ previousStatus: "pending", run: { status: "pending", fence: 0, leaseOwner: null } });
        expect(all.find((c) => c.run.id === "a-1")?.journal.map((j) => j.stepId)).toEqual(["done-before"]);
        expect((await store.claimable({ definitions: [DEF_A], limit: 10, now })).map((c) => c.run.id).sort()).toEqual(["a-1", "a-2", "a-expired", "s-1"]);
        expect((await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now, runIds: ["a-2", "a-held", "a-live", "nope"] })).map((c) => c.run.id)).toEqual(["a-2"]);
        expect(await store.claimable({ definitions: [DEF_A], limit: 0, now })).toEqual([]);
        expect(await store.claimable({ definitions: [], limit: 10, now })).toEqual([]);
        // Nothing changed: no lease, no fence, no event.
        expect(await Promise.all(ids.map((id) => snapshot(store, id)))).toEqual(before);

        // The same runs in the same order as the claim that follows, limit for limit.
        const two = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 2, now });
        const taken = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 2, leaseMs: LEASE, now });
        expect(two.map((c) => c.run.id)).toEqual(taken.map((c) => c.run.id));
        const rest = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now });
        expect(rest.map((c) => c.run.id)).toEqual((await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 10, leaseMs: LEASE, now })).map((c) => c.run.id));
        expect(rest).toHaveLength(3);
      });

      it("honours the limit", async () => {
        const t = clock.now();
        for (let i = 0; i < 5; i++) await created(`r${i}`);
        expect(await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 0, leaseMs: LEASE, now: t })).toEqual([]);
        const first = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 2, leaseMs: LEASE, now: t });
        expect(first).toHaveLength(2);
        const rest = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t });
        expect(rest).toHaveLength(3);
        expect(new Set([...first, ...rest].map((c) => c.run.id)).size).toBe(5);
      });

      it("two store instances claiming at once never claim the same run", async (ctx) => {
        if (!sut.reopen) {
          ctx.skip(`${name} factory provides no reopen(): cannot open a second instance on the same storage`);
          return;
        }
        const other = await sut.reopen();
        extra.push(other);
        const t = clock.now();
        const n = 40;
        for (let i = 0; i < n; i++) await created(`r${String(i).padStart(2, "0")}`);
        const drain = async (s: Store, workerId: string): Promise<string[]> => {
          const mine: string[] = [];
          for (;;) {
            const got = await s.claim({ owner: owner(workerId), definitions: [DEF_A], limit: 3, leaseMs: 60_000, now: t });
            if (got.length === 0) return mine;
            mine.push(...got.map((c) => c.run.id));
          }
        };
        const [a, b] = await Promise.all([drain(store, "wa"), drain(other, "wb")]);
        const all = [...a, ...b];
        expect(all).toHaveLength(n);
        expect(new Set(all).size).toBe(n);
        for (const id of a) expect(await store.getRun(id)).toMatchObject({ fence: 1, leaseOwner: "wa" });
        for (const id of b) expect(await store.getRun(id)).toMatchObject({ fence: 1, leaseOwner: "wb" });
      });
    });

    describe("guarded mutations", () => {
      it("refuses a write with a stale fence or another owner (reason lease) and changes nothing", async () => {
        await created("r1");
        await created("r2");
        expect(await claimed("r1", "w1", clock.now(), owner("w1"), clock.lease)).toBe(1);
        await clock.advance(clock.lease + clock.epsilon);
        const [c2] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["r1"] });
        expect(c2?.run.fence).toBe(2);
        const before = await snapshot(store, "r1");

        const everything = {
          run: { status: "completed" as const, output: '"late"', releaseLease: true, lostClaims: 0 },
          steps: [step(0, "late-step")],
          waits: [{ name: "w", kind: "approval" as const, seq: 1 }],
          holds: [{ kind: "storage" as const, reason: "x", details: "{}" }],
          newRuns: [newRun("late-child", { parentId: "r1", parentStepId: "k" })],
          events: [{ type: "late.event" }],
        };
        expect(await commitOne(store, [fenced("r1", 1, "w1", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        expect(await commitOne(store, [fenced("r1", 2, "w1", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        expect(await commitOne(store, [fenced("r1", 3, "w2", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        expect(await snapshot(store, "r1")).toEqual(before);
        expect(await store.getRun("late-child")).toBeUndefined();

        expect(await commitOne(store, [fenced("r1", 2, "w2", { steps: [step(0, "ok-step")], events: [{ type: "ok.event" }] })])).toMatchObject({ ok: true });
        expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["ok-step"]);
      });

      // The shape of almost every write (a step's outcome): stores may give it a path of its own.
      it("refuses a plain step write with a stale fence or another owner, alone in its commit, and changes nothing", async () => {
        await created("r1");
        expect(await claimed("r1", "w1", clock.now(), owner("w1"), clock.lease)).toBe(1);
        await clock.advance(clock.lease + clock.epsilon);
        const [c2] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["r1"] });
        expect(c2?.run.fence).toBe(2);
        const before = await snapshot(store, "r1");
        const plain = { steps: [step(0, "late-step")], run: { lostClaims: 0 }, events: [{ type: "step.completed" }] };
        expect(await commitOne(store, [fenced("r1", 1, "w1", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1", status: "running" });
        expect(await commitOne(store, [fenced("r1", 2, "w1", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        expect(await commitOne(store, [fenced("r1", 1, "w2", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        expect(await commitOne(store, [fenced("missing-run", 1, "w1", plain)])).toMatchObject({ ok: false, reason: "missing", runId: "missing-run" });
        expect(await snapshot(store, "r1")).toEqual(before);
        expect(await commitOne(store, [fenced("r1", 2, "w2", plain)])).toMatchObject({ ok: true, pauseRequested: false });
        expect((await store.journal("r1")).map((s) => [s.stepId, s.status])).toEqual([["late-step", "completed"]]);
        expect((await store.events({ runId: "r1" })).filter((e) => e.type === "step.completed")).toHaveLength(1);
        expect(c2?.run.lostClaims).toBe(1);
        expect((await store.getRun("r1"))?.lostClaims).toBe(0);
      });

      it("refuses a fenced write once the run is no longer running, even with its last fence", async () => {
        const t = clock.now();
        await created("r1");
        await claimed("r1", "w1", t);
        expect(await commitOne(store, [fenced("r1", 1, "w1", { run: { status: "waiting", releaseLease: true } })])).toMatchObject({ ok: true });
        const before = await snapshot(store, "r1");
        expect(await commitOne(store, [fenced("r1", 1, "w1", { steps: [step(0, "x")], events: [{ type: "x" }] })])).toMatchObject({ ok: false, reason: "lease" });
        expect(await snapshot(store, "r1")).toEqual(before);
      });

      it("checks the status precondition, reporting the current status; a missing run is reported as missing", async () => {
        await created("r1");
        const before = await snapshot(store, "r1");
        expect(await commitOne(store, [{ runId: "r1", expect: { status: ["waiting", "paused"] }, run: { status: "cancelled" }, events: [{ type: "x" }] }])).toEqual({
          ok: false,
          reason: "status",
          runId: "r1",
          status: "pending",
        });
        expect(await snapshot(store, "r1")).toEqual(before);
        expect(await commitOne(store, [{ runId: "r1", expect: { status: ["pending"] }, run: { status: "paused" } }])).toMatchObject({ ok: true });
        expect((await store.getRun("r1"))?.status).toBe("paused");
        expect(await commitOne(store, [{ runId: "ghost", run: { status: "paused" } }])).toMatchObject({ ok: false, reason: "missing", runId: "ghost" });
      });

      it("checks the openWait precondition", async () => {
        await created("r1");
        const guarded = (type: string): Mutation => ({ runId: "r1", expect: { openWait: "ok" }, events: [{ type }] });
        expect(await commitOne(store, [guarded("before-open")])).toMatchObject({ ok: false, reason: "wait", runId: "r1" });
        await commitOne(store, [{ runId: "r1", waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
        expect(await commitOne(store, [guarded("while-open")])).toMatchObject({ ok: true });
        await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "ok", status: "resolved", result: "true" }] }]);
        expect(await commitOne(store, [guarded("after-resolve")])).toMatchObject({ ok: false, reason: "wait" });
        expect((await store.events({ runId: "r1" })).map((e) => e.type)).toEqual(["run.created", "while-open"]);
      });

      it("checks the openHold precondition, per run", async () => {
        await created("r1");
        await created("r2");
        await commitOne(store, [{ runId: "r1", holds: [{ kind: "nondeterminism", reason: "diverged", details: "{}" }] }]);
        const [hold] = await store.holds({ runId: "r1" });
        if (!hold) throw new Error("no hold written");
        expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id + 1000 }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold" });
        expect(await commitOne(store, [{ runId: "r2", expect: { openHold: hold.id }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold", runId: "r2" });
        expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id }, releaseHolds: [{ id: hold.id, choice: "retry", by: "ann" }] }])).toMatchObject({ ok: true });
        expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold" });
        expect((await store.events()).filter((e) => e.type === "x")).toEqual([]);
      });

      it("skips an optional mutation whose precondition fails without failing its unit", async () => {
        await created("r1");
        await created("r2");
        const r = await commitOne(store, [
          { runId: "r1", steps: [step(0, "kept")], events: [{ type: "kept" }] },
          { runId: "r2", optional: true, expect: { status: ["waiting"] }, run: { status: "pending", output: '"no"' }, steps: [step(0, "skipped")], events: [{ type: "skipped" }] },
          { runId: "ghost", optional: true, events: [{ type: "skipped" }] },
        ]);
        expect(r).toMatchObject({ ok: true });
        expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["kept"]);
        expect(await store.journal("r2")).toEqual([]);
        expect((await store.getRun("r2"))?.output).toBeNull();
        expect((await store.events()).map((e) => e.type)).not.toContain("skipped");
      });

      it("applies a unit all-or-nothing, while other units of the same commit still apply", async () => {
        for (const id of ["r1", "r2", "r3"]) await created(id);
        const before1 = await snapshot(store, "r1");
        const before2 = await snapshot(store, "r2");
        const results = await store.commit([
          [
            {
              runId: "r1",
              run: { status: "waiting", output: '"x"' },
              steps: [step(0, "s")],
              waits: [{ name: "w", kind: "signal", seq: 1 }],
              holds: [{ kind: "storage", reason: "r", details: "{}" }],
              newRuns: [newRun("r1-child", { parentId: "r1", parentStepId: "k" })],
              events: [{ type: "first" }],
            },
            { runId: "r2", expect: { status: ["held"] }, run: { status: "completed" }, events: [{ type: "second" }] },
          ],
          [{ runId: "r3", run: { output: '"r3"' }, steps: [step(0, "t")], events: [{ type: "third" }] }],
        ]);
        expect(results).toEqual([{ ok: false, reason: "status", runId: "r2", status: "pending" }, { ok: true, pauseRequested: false }]);
        expect(await snapshot(store, "r1")).toEqual(before1);
        expect(await snapshot(store, "r2")).toEqual(before2);
        expect(await store.getRun("r1-child")).toBeUndefined();
        expect((await store.getRun("r3"))?.output).toBe('"r3"');
        expect((await store.journal("r3")).map((s) => s.stepId)).toEqual(["t"]);
        expect((await store.events({ runId: "r3" })).map((e) => e.type)).toEqual(["run.created", "third"]);
      });

      it("runs beforeCommit once inside the transaction: if it throws, no unit of the batch is applied", async () => {
        await created("r1");
        await created("r2");
        const before = [await snapshot(store, "r1"), await snapshot(store, "r2")];
        let calls = 0;
        const batch = [[{ runId: "r1", steps: [step(0, "a")], events: [{ type: "a" }] }], [{ runId: "r2", run: { status: "paused" as const } }]];
        await expect(
          store.commit(batch, {
            beforeCommit: () => {
              calls++;
              throw new Error("crash between apply and commit");
            },
          }),
        ).rejects.toThrow("crash between apply and commit");
        expect(calls).toBe(1);
        expect([await snapshot(store, "r1"), await snapshot(store, "r2")]).toEqual(before);

        await store.commit(batch, { beforeCommit: () => void calls++ });
        expect(calls).toBe(2);
        expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["a"]);
        expect((await store.getRun("r2"))?.status).toBe("paused");
      });
    });

    describe("writes", () => {
      it("patches run columns; releaseLease keeps the fence; the unit reports pauseRequested", async () => {
        const t = clock.now();
        await created("r1");
        await claimed("r1", "w1", t);
        expect(await commitOne(store, [{ runId: "r1", expect: { status: ["running"] }, run: { pauseRequested: true } }])).toEqual({ ok: true, pauseRequested: true });
        expect(await commitOne(store, [fenced("r1", 1, "w1", { steps: [step(0, "a")] })])).toEqual({ ok: true, pauseRequested: true });
        const r = await commitOne(store, [
          fenced("r1", 1, "w1", { run: { status: "completed", output: '{"v":1}', error: '{"message":"m"}', fingerprint: "fp-2", lostClaims: 2, pauseRequested: false, releaseLease: true } }),
        ]);
        expect(r).toEqual({ ok: true, pauseRequested: false });
        expect(await store.getRun("r1")).toMatchObject({
          status: "completed",
          output: '{"v":1}',
          error: '{"message":"m"}',
          fingerprint: "fp-2",
          lostClaims: 2,
          pauseRequested: false,
          leaseOwner: null,
          leaseExpiresAt: null,
          fence: 1,
        });
        await commitOne(store, [{ runId: "r1", run: { output: null, fingerprint: null } }]);
        expect(await store.getRun("r1")).toMatchObject({ output: null, fingerprint: null, error: '{"message":"m"}' });
      });

      it("upserts steps by (runId, seq)", async () => {
        await created("r1");
        await created("r2");
        await commitOne(store, [{ runId: "r1", steps: [step(0, "pay", { kind: "effect", status: "intent", output: null, completedAt: null })] }]);
        await commitOne(store, [{ runId: "r2", steps: [step(0, "other")] }]);
        await commitOne(store, [{ runId: "r1", steps: [step(0, "pay", { kind: "effect", status: "completed", attempt: 2, output: '"paid"', completedAt: 9_999 })] }]);
        expect(await store.journal("r1")).toEqual([
          { runId: "r1", seq: 0, stepId: "pay", kind: "effect", status: "completed", attempt: 2, output: '"paid"', error: null, startedAt: 1_000, completedAt: 9_999, checkpoint: null },
        ]);
        expect((await store.journal("r2")).map((s) => s.stepId)).toEqual(["other"]);
      });

      it("deleteStepsFrom removes the journal from a position on, for that run only", async () => {
        await created("r1", { journal: [0, 1, 2, 3].map((i) => step(i, `s${i}`)) });
        await created("r2", { journal: [0, 1, 2, 3].map((i) => step(i, `s${i}`)) });
        expect(await commitOne(store, [{ runId: "r1", deleteStepsFrom: 2 }])).toMatchObject({ ok: true });
        expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["s0", "s1"]);
        expect(await store.journal("r2")).toHaveLength(4);
      });

      it("opens waits and resolves them; resolving completes the wait's journal step with the result", async () => {
        await created("r1");
        await commitOne(store, [
          {
            runId: "r1",
            steps: [step(0, "a"), step(1, "ok", { kind: "approval", status: "waiting", output: null, completedAt: null }), step(2, "go", { kind: "signal", status: "waiting", output: null, completedAt: null })],
            waits: [
              { name: "ok", kind: "approval", seq: 1, request: '{"q":"ship?"}' },
              { name: "go", kind: "signal", seq: 2 },
            ],
          },
        ]);
        const opened = await store.waits("r1");
        expect(opened).toEqual([
          { runId: "r1", name: "ok", kind: "approval", status: "open", seq: 1, request: '{"q":"ship?"}', wakeAt: null, result: null, createdAt: expect.any(Number) as number, resolvedAt: null, resolvedBy: null },
          { runId: "r1", name: "go", kind: "signal", status: "open", seq: 2, request: null, wakeAt: null, result: null, createdAt: expect.any(Number) as number, resolvedAt: null, resolvedBy: null },
        ]);
        expect(
          await commitOne(store, [
            { runId: "r1", expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", status: "resolved", result: '{"approved":true}', by: "ann" }] },
          ]),
        ).toMatchObject({ ok: true });
        const [ok, go] = await store.waits("r1");
        expect(ok).toMatchObject({ status: "resolved", result: '{"approved":true}', resolvedBy: "ann", resolvedAt: expect.any(Number) as number });
        expect(go).toMatchObject({ status: "open", result: null });
        const journal = await store.journal("r1");
        expect(journal[1]).toMatchObject({ stepId: "ok", status: "completed", output: '{"approved":true}', completedAt: expect.any(Number) as number });
        expect(journal[2]).toMatchObject({ stepId: "go", status: "waiting", output: null });
        expect(journal[0]).toMatchObject({ stepId: "a", output: '"a"' });

        await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "go", status: "cancelled", by: "bob" }] }]);
        expect((await store.waits("r1"))[1]).toMatchObject({ status: "cancelled", resolvedBy: "bob" });
        expect((await store.journal("r1"))[2]?.status).not.toBe("completed");
      });

      it("opens holds and releases them with the choice and who chose", async () => {
        await created("r1");
        await commitOne(store, [{ runId: "r1", holds: [{ kind: "ambiguous_effect", stepId: "pay", seq: 3, reason: "maybe paid", details: '{"k":1}' }] }]);
        const [h] = await store.holds({ runId: "r1" });
        expect(h).toEqual({
          id: expect.any(Number) as number,
          runId: "r1",
          kind: "ambiguous_effect",
          stepId: "pay",
          seq: 3,
          reason: "maybe paid",
          details: '{"k":1}',
          status: "open",
          choice: null,
          createdAt: expect.any(Number) as number,
          releasedAt: null,
          releasedBy: null,
        });
        await commitOne(store, [{ runId: "r1", releaseHolds: [{ id: h?.id ?? -1, choice: "skip", by: "ann" }] }]);
        expect((await store.holds({ runId: "r1" }))[0]).toMatchObject({ status: "released", choice: "skip", releasedBy: "ann", releasedAt: expect.any(Number) as number });
      });

      it("creates new runs in a mutation, as children of the run", async () => {
        await created("p");
        expect(await commitOne(store, [{ runId: "p", newRuns: [newRun("p.kid", { parentId: "p", parentStepId: "kid", definition: DEF_B })] }])).toMatchObject({ ok: true });
        expect(await store.getRun("p.kid")).toMatchObject({ status: "pending", parentId: "p", parentStepId: "kid", definition: DEF_B, fence: 0 });
        expect((await store.listRuns({ parentId: "p" })).map((r) => r.id)).toEqual(["p.kid"]);
      });
    });

    describe("checkpoint metadata", () => {
      const cp = (v: string) => JSON.stringify({ commit: v, branch: "main" });
      const checkpoints = async (runId: string) => (await store.journal(runId)).map((s) => [s.seq, s.status, s.checkpoint]);

      // The single-step shape is the one stores may give a path of its own (see "guarded mutations").
      it("reads back with its step, written through the single-step shape and through a generic unit; each write of a step sets it to its own value", async () => {
        await created("r1");
        const fence = await claimed("r1", "w1", clock.now());
        const single = (st: StepWrite) => commitOne(store, [fenced("r1", fence, "w1", { steps: [st], run: { lostClaims: 0 }, events: [{ type: "step.completed" }] })]);
        const generic = (st: StepWrite) => commitOne(store, [fenced("r1", fence, "w1", { steps: [st], run: { pauseRequested: false } }), { runId: "r1", events: [{ type: "x" }] }]);
        const intent = (seq: number, over: Partial<StepWrite> = {}) => step(seq, `e${seq}`, { kind: "effect", status: "intent", output: null, completedAt: null, ...over });
        const done = (seq: number, over: Partial<StepWrite> = {}) => step(seq, `e${seq}`, { kind: "effect", ...over });

        expect(await single(intent(0, { checkpoint: cp("a0") }))).toEqual({ ok: true, pauseRequested: false });
        expect(await generic(intent(1, { checkpoint: cp("a1") }))).toEqual({ ok: true, pauseRequested: false });
        expect(await single(step(2, "plain"))).toMatchObject({ ok: true });
        expect(await checkpoints("r1")).toEqual([[0, "intent", cp("a0")], [1, "intent", cp("a1")], [2, "completed", null]]);
        expect((await store.journal("r1"))[0]).toEqual({ ...intent(0), runId: "r1", error: null, checkpoint: cp("a0") });

        // A later write of the same step takes its own value: a new one replaces, an absent one clears.
        expect(await single(done(0, { checkpoint: cp("b0") }))).toMatchObject({ ok: true });
        expect(await generic(done(1))).toMatchObject({ ok: true });
        expect(await checkpoints("r1")).toEqual([[0, "completed", cp("b0")], [1, "completed", null], [2, "completed", null]]);
        expect(await generic(done(1, { checkpoint: cp("b1") }))).toMatchObject({ ok: true });
        expect(await single(done(0))).toMatchObject({ ok: true });
        expect(await single(done(2, { checkpoint: null }))).toMatchObject({ ok: true });
        expect(await checkpoints("r1")).toEqual([[0, "completed", null], [1, "completed", cp("b1")], [2, "completed", null]]);

        // Several steps in one single-step-shaped write each keep their own.
        expect(await commitOne(store, [fenced("r1", fence, "w1", { steps: [done(3, { checkpoint: cp("c3") }), done(4)] })])).toMatchObject({ ok: true });
        expect((await checkpoints("r1")).slice(3)).toEqual([[3, "completed", cp("c3")], [4, "completed", null]]);
      });

      it("travels with a new run's journal (createRun and newRuns), comes back with a claim, and survives the resolution of a wait", async () => {
        await created("fork", { journal: [step(0, "a", { checkpoint: cp("f0") }), step(1, "b")] });
        expect(await checkpoints("fork")).toEqual([[0, "completed", cp("f0")], [1, "completed", null]]);
        const [claim] = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["fork"] });
        expect(claim?.journal.map((s) => s.checkpoint)).toEqual([cp("f0"), null]);

        await created("p");
        expect(await commitOne(store, [{ runId: "p", newRuns: [newRun("p.kid", { parentId: "p", journal: [step(0, "k", { checkpoint: cp("k0") })] })] }])).toMatchObject({ ok: true });
        expect(await checkpoints("p.kid")).toEqual([[0, "completed", cp("k0")]]);

        await commitOne(store, [{ runId: "p", steps: [step(0, "ok", { kind: "approval", status: "waiting", output: null, completedAt: null, checkpoint: cp("w0") })], waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
        expect(await commitOne(store, [{ runId: "p", expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", status: "resolved", result: "true" }] }])).toMatchObject({ ok: true });
        expect(await checkpoints("p")).toEqual([[0, "completed", cp("w0")]]);
      });

      it("a write refused by the fence leaves nothing, through either shape, alone or in a batch", async () => {
        await created("r1");
        await created("r2");
        const fence = await claimed("r1", "w1", clock.now());
        await commitOne(store, [fenced("r1", fence, "w1", { steps: [step(0, "s0", { checkpoint: cp("kept") })] })]);
        const before = await snapshot(store, "r1");
        const late = [step(0, "s0", { checkpoint: cp("late") }), step(1, "s1", { checkpoint: cp("late") })];
        const refusals: Mutation[][] = [
          [fenced("r1", fence + 1, "w1", { steps: late, run: { lostClaims: 0 }, events: [{ type: "step.completed" }] })],
          [fenced("r1", fence, "w2", { steps: late })],
          [fenced("r1", fence - 1, "w1", { steps: late, run: { pauseRequested: false }, events: [{ type: "late" }] })],
          [fenced("r1", fence, "w2", { steps: late }), { runId: "r2", steps: [step(1, "leak", { checkpoint: cp("leak") })] }],
        ];
        for (const unit of refusals) expect(await commitOne(store, unit)).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
        const batch = await store.commit([[fenced("r1", fence + 1, "w1", { steps: late })], [{ runId: "r2", steps: [step(0, "r2", { checkpoint: cp("r2") })] }]]);
        expect(batch.map((r) => r.ok)).toEqual([false, true]);
        expect(await snapshot(store, "r1")).toEqual(before);
        expect(await checkpoints("r1")).toEqual([[0, "completed", cp("kept")]]);
        expect(await checkpoints("r2")).toEqual([[0, "completed", cp("r2")]]);
      });
    });

    describe("leases", () => {
      it("renewLeases renews, in one call, exactly the leases held with the given fence by that owner", async () => {
        for (const id of ["r1", "r2", "r3", "r4", "r5"]) await created(id);
        for (const id of ["r1", "r2", "r3"]) await claimed(id, "w1", clock.now());
        const { at: r4Claim } = await clock.span((now) => claimed("r4", "w2", now));
        await claimed("r5", "w1", clock.now());
        await commitOne(store, [fenced("r5", 1, "w1", { run: { status: "waiting", releaseLease: true } })]);
        const before = await store.getRun("r2");

        await clock.advance(100);
        const { value: renewed, at } = await clock.span((now) =>
          store.renewLeases(
            "w1",
            [
              { runId: "r1", fence: 1 },
              { runId: "r2", fence: 7 },
              { runId: "r3", fence: 1 },
              { runId: "r4", fence: 1 },
              { runId: "r5", fence: 1 },
              { runId: "ghost", fence: 1 },
            ],
            5_000,
            now,
          ),
        );
        expect([...renewed].sort()).toEqual(["r1", "r3"]);
        clock.expectLeaseEnd((await store.getRun("r1"))?.leaseExpiresAt, at, 5_000, "r1 lease end");
        clock.expectLeaseEnd((await store.getRun("r3"))?.leaseExpiresAt, at, 5_000, "r3 lease end");
        expect(await store.getRun("r2")).toEqual(before);
        clock.expectLeaseEnd((await store.getRun("r4"))?.leaseExpiresAt, r4Claim, LEASE, "r4 lease end");
        expect((await store.getRun("r5"))?.leaseExpiresAt).toBeNull();
        expect(await store.renewLeases("w1", [], 5_000, clock.now())).toEqual([]);
      });

      it("a renewed lease is not reclaimable until the renewed expiry", async () => {
        const lease = clock.lease;
        const renewal = 3 * lease;
        await created("r1");
        await claimed("r1", "w1", clock.now(), owner("w1"), lease);
        await clock.advance(lease / 2);
        expect(await store.renewLeases("w1", [{ runId: "r1", fence: 1 }], renewal, clock.now())).toEqual(["r1"]);
        // 2 leases after the claim: past the first lease's end, and past the end a renewal by `lease`
        // instead of `renewal` would have set; a whole lease before the renewed end.
        await clock.advance(1.5 * lease);
        expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toEqual([]);
        await clock.advance(renewal - 1.5 * lease + clock.epsilon);
        expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toHaveLength(1);
      });

      it("expireLease ends a lease only while it carries the given fence", async () => {
        const t = clock.now();
        await created("r1");
        await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 1, leaseMs: 3_600_000, now: t });
        expect(await store.expireLease("r1", 2, "wrong fence")).toBe(false);
        expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toEqual([]);
        expect(await store.expireLease("r1", 1, "owner gone")).toBe(true);
        const [c] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() });
        expect(c?.previousStatus).toBe("running");
        expect(c?.run).toMatchObject({ fence: 2, leaseOwner: "w2", lostClaims: 1 });
        expect(await store.expireLease("r1", 1, "stale")).toBe(false);
        await commitOne(store, [fenced("r1", 2, "w2", { run: { status: "completed", releaseLease: true } })]);
        expect(await store.expireLease("r1", 2, "not running")).toBe(false);
        expect((await store.getRun("r1"))?.status).toBe("completed");
      });

      it("leasesOnHost lists the running runs' leases on one host", async () => {
        for (const id of ["r1", "r2", "r3"]) await created(id);
        const a = owner("w1", "host-a", 101);
        const b = owner("w2", "host-b", 202);
        const { at } = await clock.span((now) => claimed("r1", "w1", now, a));
        await claimed("r2", "w2", clock.now(), b);
        await claimed("r3", "w1", clock.now(), a);
        await commitOne(store, [fenced("r3", 1, "w1", { run: { status: "pending", releaseLease: true } })]);
        const onA = await store.leasesOnHost("host-a");
        expect(onA).toEqual([
          { runId: "r1", fence: 1, leaseOwner: "w1", ownerHost: "host-a", ownerPid: 101, ownerStart: a.start, leaseExpiresAt: expect.any(Number) as number },
        ]);
        clock.expectLeaseEnd(onA[0]?.leaseExpiresAt, at, LEASE);
        expect((await store.leasesOnHost("host-b")).map((l) => l.runId)).toEqual(["r2"]);
        expect(await store.leasesOnHost("host-c")).toEqual([]);
      });
    });

    describe("timers and holds", () => {
      it("dueTimers returns open timer waits due at or before now, up to the limit", async () => {
        const t = Date.now();
        for (const id of ["due1", "due2", "later", "approval", "resolved"]) await created(id);
        const timer = (runId: string, wakeAt: number): Mutation => ({ runId, waits: [{ name: "nap", kind: "timer", seq: 0, wakeAt }] });
        await store.commit([[timer("due1", t - 10)], [timer("due2", t)], [timer("later", t + 60_000)], [timer("resolved", t - 50)]]);
        await commitOne(store, [{ runId: "approval", waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
        await commitOne(store, [{ runId: "resolved", resolveWaits: [{ name: "nap", status: "resolved", result: "{}" }] }]);
        const due = await store.dueTimers(t, 100);
        expect(due.map((w) => w.runId).sort()).toEqual(["due1", "due2"]);
        expect(due.find((w) => w.runId === "due1")).toMatchObject({ name: "nap", kind: "timer", status: "open", wakeAt: t - 10 });
        expect(await store.dueTimers(t, 1)).toHaveLength(1);
        expect(await store.dueTimers(t - 1_000, 100)).toEqual([]);
      });

      it("holds() filters by run and status", async () => {
        await created("r1");
        await created("r2");
        await commitOne(store, [{ runId: "r1", holds: [{ kind: "process_failed", reason: "a", details: "{}" }, { kind: "storage", reason: "b", details: "{}" }] }]);
        await commitOne(store, [{ runId: "r2", holds: [{ kind: "nondeterminism", reason: "c", details: "{}" }] }]);
        const r1 = await store.holds({ runId: "r1" });
        expect(r1.map((h) => h.reason).sort()).toEqual(["a", "b"]);
        await commitOne(store, [{ runId: "r1", releaseHolds: [{ id: r1.find((h) => h.reason === "a")?.id ?? -1, choice: "retry" }] }]);
        expect((await store.holds()).map((h) => h.reason).sort()).toEqual(["a", "b", "c"]);
        expect((await store.holds({ status: "open" })).map((h) => h.reason).sort()).toEqual(["b", "c"]);
        expect((await store.holds({ status: "released" })).map((h) => h.reason)).toEqual(["a"]);
        expect((await store.holds({ runId: "r1", status: "open" })).map((h) => h.reason)).toEqual(["b"]);
        expect(await store.holds({ runId: "r3" })).toEqual([]);
      });

      it("dueTimers also returns due quota waits, earliest first, and not future ones", async () => {
        const t = Date.now();
        for (const id of ["q-due", "q-later", "q-resolved", "timer-due"]) await created(id);
        const wake = (runId: string, kind: WaitKind, wakeAt: number): Mutation => ({ runId, waits: [{ name: `${kind}-1`, kind, seq: 0, wakeAt }] });
        await store.commit([[wake("q-due", "quota", t - 5)], [wake("q-later", "quota", t + 60_000)], [wake("q-resolved", "quota", t - 50)], [wake("timer-due", "timer", t - 20)]]);
        await commitOne(store, [{ runId: "q-resolved", resolveWaits: [{ name: "quota-1", status: "resolved", result: "{}" }] }]);
        const due = await store.dueTimers(t, 100);
        expect(due.map((w) => [w.runId, w.kind])).toEqual([
          ["timer-due", "timer"],
          ["q-due", "quota"],
        ]);
        expect(due[1]).toMatchObject({ name: "quota-1", status: "open", wakeAt: t - 5 });
        expect((await store.dueTimers(t + 60_000, 100)).map((w) => w.runId)).toEqual(["timer-due", "q-due", "q-later"]);
      });

      it("keeps step and wait kinds as written, including ones it does not list", async () => {
        const kinds = ["model", "tool", "quota", "from-a-newer-stead"] as StepKind[];
        await created("k1", { journal: kinds.map((kind, i) => step(i, `s${i}`, { kind })) });
        expect((await store.journal("k1")).map((s) => s.kind)).toEqual(kinds);
        await commitOne(store, [{ runId: "k1", waits: [{ name: "w", kind: "from-a-newer-stead" as WaitKind, seq: 9, wakeAt: null }] }]);
        expect((await store.waits("k1")).map((w) => w.kind)).toEqual(["from-a-newer-stead"]);
      });
    });

    describe("sessions and turns", () => {
      const TERMINAL: readonly RunStatus[] = ["completed", "failed", "cancelled"];

      /** Creates run `id` as the next turn of `sessionId`; returns the row createRun gave back. */
      async function turn(id: string, sessionId: string, over: Partial<NewRun> = {}): Promise<RunRow> {
        return store.createRun(newRun(id, { sessionId, ...over }), [{ type: "run.created", data: { id } }]);
      }

      async function claimable(runIds?: string[], limit = 50): Promise<string[]> {
        const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit, leaseMs: LEASE, now: clock.now(), ...(runIds ? { runIds } : {}) });
        return got.map((c) => c.run.id).sort();
      }

      it("createRun numbers each session's turns 1, 2, 3 on its own, returns the row, and leaves runs outside a session unnumbered", async () => {
        const rows = [
          await turn("a1", "S-a", { createdAt: 1_000 }),
          await turn("b1", "S-b", { createdAt: 1_500 }),
          await turn("a2", "S-a", { createdAt: 2_000 }),
          await store.createRun(newRun("plain", { createdAt: 2_500 }), []),
          await turn("a3", "S-a", { createdAt: 3_000 }),
          await turn("b2", "S-b", { createdAt: 3_500 }),
        ];
        expect(rows.map((r) => [r.id, r.sessionId, r.turn])).toEqual([
          ["a1", "S-a", 1],
          ["b1", "S-b", 1],
          ["a2", "S-a", 2],
          ["plain", null, null],
          ["a3", "S-a", 3],
          ["b2", "S-b", 2],
        ]);
        for (const r of rows) expect(await store.getRun(r.id)).toEqual(r);
        expect(rows[0]).toMatchObject({ status: "pending", fence: 0, definition: DEF_A, createdAt: 1_000, updatedAt: 1_000 });
        // Turn order, not the default newest-first.
        expect((await store.listRuns({ sessionId: "S-a" })).map((r) => r.id)).toEqual(["a1", "a2", "a3"]);
        expect((await store.listRuns({ sessionId: "S-a", limit: 2 })).map((r) => r.id)).toEqual(["a1", "a2"]);
        expect((await store.listRuns({ sessionId: "S-b", status: ["pending"] })).map((r) => r.id)).toEqual(["b1", "b2"]);
        expect(await store.listRuns({ sessionId: "S-none" })).toEqual([]);
        // A refused duplicate id takes no turn number.
        await expect(turn("a3", "S-a")).rejects.toThrow();
        expect((await turn("a4", "S-a")).turn).toBe(4);
      });

      it("concurrent createRun on one session through two store instances gives distinct, consecutive turns", async (ctx) => {
        if (!sut.reopen) {
          ctx.skip(`${name} factory provides no reopen(): cannot open a second instance on the same storage`);
          return;
        }
        const other = await sut.reopen();
        extra.push(other);
        const n = 24;
        const made = await Promise.all(
          Array.from({ length: n }, (_, i) => (i % 2 === 0 ? store : other).createRun(newRun(`t${String(i).padStart(2, "0")}`, { sessionId: "S-race" }), [])),
        );
        expect(made.map((r) => r.turn).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        const stored = await store.listRuns({ sessionId: "S-race" });
        expect(stored.map((r) => r.turn)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        for (const r of made) expect(stored.find((x) => x.id === r.id)?.turn).toBe(r.turn);
      });

      it("claim skips a turn while an earlier turn is pending, running, waiting, held or paused, and takes it once that turn ended", async () => {
        await turn("s1", "S", { createdAt: 1_000 });
        await turn("s2", "S", { createdAt: 2_000 });
        await turn("s3", "S", { createdAt: 3_000 });
        // Pending turn 1 blocks turns 2 and 3, even when asked for by id.
        expect(await claimable(["s2", "s3"])).toEqual([]);
        expect(await claimable()).toEqual(["s1"]);
        // Turn 1 is running now.
        expect(await claimable(["s2"])).toEqual([]);
        for (const status of ["waiting", "held", "paused", "pending"] as const) {
          await setStatus("s1", status);
          expect(await claimable(["s2", "s3"]), `turn 1 ${status}`).toEqual([]);
        }
        for (const status of TERMINAL) {
          const sid = `S-${status}`;
          await turn(`${sid}-1`, sid);
          await turn(`${sid}-2`, sid);
          await setStatus(`${sid}-1`, status);
          expect(await claimable([`${sid}-2`]), `turn 1 ${status}`).toEqual([`${sid}-2`]);
        }
        // Turn 1 completed: turn 2 is next; turn 3 still waits behind it.
        await setStatus("s1", "completed");
        expect(await claimable()).toEqual(["s2"]);
        expect(await claimable(["s3"])).toEqual([]);
        await setStatus("s2", "failed");
        expect(await claimable()).toEqual(["s3"]);
      });

      it("claim needs every earlier turn ended, not only the one just before", async () => {
        await turn("s1", "S");
        await turn("s2", "S");
        await turn("s3", "S");
        await setStatus("s1", "held");
        await setStatus("s2", "cancelled");
        expect(await claimable()).toEqual([]);
        await setStatus("s1", "cancelled");
        expect(await claimable()).toEqual(["s3"]);
      });

      it("runs outside a session, and other sessions, are claimed as before; blocked turns take no claim slot", async () => {
        await turn("s1", "S", { createdAt: 1_000 });
        await turn("s2", "S", { createdAt: 2_000 });
        await turn("t1", "T", { createdAt: 3_000 });
        await created("plain", { createdAt: 4_000 });
        await setStatus("s1", "held");
        await setStatus("t1", "held");
        // The oldest candidates (s2, then t1) are not claimable: the one slot goes to the plain run.
        expect(await claimable(undefined, 1)).toEqual(["plain"]);
        await turn("u1", "U", { createdAt: 5_000 });
        expect(await claimable()).toEqual(["u1"]);
      });

      it("listSessions reports turns, open turns, the current and the last ended turn, most recently updated first", async () => {
        await turn("a1", "A", { createdAt: 1_000 });
        await turn("a2", "A", { createdAt: 1_100 });
        await turn("a3", "A", { createdAt: 1_200 });
        await turn("a4", "A", { createdAt: 1_300, definition: DEF_B });
        await turn("b1", "B", { createdAt: 900 });
        await turn("c1", "C", { createdAt: 1_050 });
        await turn("c2", "C", { createdAt: 1_150 });
        await created("plain", { createdAt: 1_400 });
        await commitOne(store, [{ runId: "a1", run: { status: "completed", output: '"ok"' } }]);
        await commitOne(store, [{ runId: "a2", run: { status: "failed", error: '{"message":"boom"}' } }]);
        await commitOne(store, [{ runId: "c1", run: { status: "completed" } }]);
        await commitOne(store, [{ runId: "c2", run: { status: "cancelled", error: '{"message":"cancelled"}' } }]);

        const list = await store.listSessions();
        expect(list.map((s) => s.sessionId).sort()).toEqual(["A", "B", "C"]);
        const byId = Object.fromEntries(list.map((s) => [s.sessionId, s]));
        const updated = async (sid: string) => Math.max(...(await store.listRuns({ sessionId: sid })).map((r) => r.updatedAt));
        expect(byId.A).toEqual({
          sessionId: "A",
          definition: DEF_B,
          turns: 4,
          open: 2,
          current: { runId: "a3", turn: 3, status: "pending" },
          last: { runId: "a2", turn: 2, status: "failed", error: '{"message":"boom"}' },
          createdAt: 1_000,
          updatedAt: await updated("A"),
        });
        expect(byId.B).toEqual({
          sessionId: "B",
          definition: DEF_A,
          turns: 1,
          open: 1,
          current: { runId: "b1", turn: 1, status: "pending" },
          last: null,
          createdAt: 900,
          updatedAt: 900,
        });
        expect(byId.C).toEqual({
          sessionId: "C",
          definition: DEF_A,
          turns: 2,
          open: 0,
          current: null,
          last: { runId: "c2", turn: 2, status: "cancelled", error: '{"message":"cancelled"}' },
          createdAt: 1_050,
          updatedAt: await updated("C"),
        });
        // Most recently updated first: B, untouched since it was created, comes last.
        expect(list.map((s) => s.updatedAt)).toEqual(list.map((s) => s.updatedAt).sort((x, y) => y - x));
        expect(list[2]?.sessionId).toBe("B");
        expect(await store.listSessions({ limit: 1 })).toEqual([list[0]]);
        expect(await store.listSessions({ sessionId: "C" })).toEqual([byId.C]);
        expect(await store.listSessions({ sessionId: "nobody" })).toEqual([]);

        // A claimed, waiting current turn is reported with its status.
        expect(await claimable(["a3"])).toEqual(["a3"]);
        await setStatus("a3", "waiting");
        expect((await store.listSessions({ sessionId: "A" }))[0]?.current).toEqual({ runId: "a3", turn: 3, status: "waiting" });
      });

      it("refuses a session in a mutation's newRuns and changes nothing", async () => {
        await created("parent");
        const before = await snapshot(store, "parent");
        await expect(
          store.commit([[{ runId: "parent", events: [{ type: "x" }], newRuns: [newRun("kid", { sessionId: "S", parentId: "parent", parentStepId: "k" })] }]]),
        ).rejects.toMatchObject({ code: "STEAD_INVALID_MUTATION" });
        expect(await snapshot(store, "parent")).toEqual(before);
        expect(await store.getRun("kid")).toBeUndefined();
      });
    });
  });
}
