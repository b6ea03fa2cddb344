/** Workspace snapshots, committed with their steps, and content-addressed blobs (`SnapshotsAndBlobs`). */
import type { BlobWrite, SnapshotWrite, Store } from "../types.js";
import { newRun, step, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeSnapshotsAndBlobs(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, setStatus, commitOne, snapshot } = h;
  describe("workspace snapshots and blobs", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

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
}
