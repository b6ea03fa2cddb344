/**
 * Raw rows for export and import (`TransferRows`): pages in key order, values every dialect
 * writes alike, and inserts kept exactly as given, all-or-nothing. Text keys here sort alike in
 * every collation (lower-case letters and digits), so the expected page order is the same.
 */
import { TRANSFER_TABLES, type Store, type TransferRow, type TransferTable } from "../types.js";
import { fenced, newRun, owner, step, DEF_A, LEASE } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

const BYTES = Buffer.from([0, 255, 1, 254, 10, 13, 0]);

/** Something in every transfer table. */
async function populate(h: Harness, store: Store): Promise<void> {
  const { commitOne } = h;
  await store.createRun(newRun("r01", { workspace: "/ws/é", journal: [step(0, "a", { checkpoint: '{"k":"v"}' }), step(1, "b")] }), [{ type: "run.created", data: { n: 1 } }]);
  await store.createRun(newRun("r02", { parentId: "r01", parentStepId: "kid" }), [{ type: "run.created" }]);
  await store.createRun(newRun("r03", { sessionId: "s01" }), []);
  const [c] = await store.claim({ owner: owner("w1", "host-t", 77), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: h.clock.now(), runIds: ["r01"] });
  if (!c) throw new Error("conformance: r01 was not claimed");
  await store.putBlobs([{ hash: "blob01", size: 40, data: BYTES }]);
  await commitOne(store, [
    fenced("r01", c.run.fence, "w1", {
      steps: [step(2, "ask", { kind: "approval", status: "waiting", output: null, completedAt: null })],
      waits: [{ name: "ask", kind: "approval", seq: 2, request: '{"q":1}' }],
      holds: [{ kind: "ambiguous_effect", stepId: "b", seq: 1, reason: "maybe", details: "{}" }],
      snapshots: [{ seq: 1, stepId: "b", source: "step", root: "blob01", files: 1, bytes: 40, filesChanged: 1, newBytes: 7, notes: null, checkpoint: null, createdAt: 1_700_000_000_000 }],
      events: [{ type: "step.completed", data: { step: "b" } }],
    }),
  ]);
  await store.createToken({ id: "tok01", name: "ann", role: "viewer", hash: "ab".repeat(32), createdAt: 1_700_000_000_000, createdBy: "root" });
  await commitOne(store, [{ runId: "r02", run: { pauseRequested: true }, idempotency: { verb: "pause", scope: "r02", key: "k1", digest: "d", summary: "{}", result: "{}", actor: "ann", ttlMs: 3_600_000 }, events: [{ type: "run.paused" }] }]);
}

async function allRows(store: Store): Promise<Record<TransferTable, TransferRow[]>> {
  const out = {} as Record<TransferTable, TransferRow[]>;
  for (const table of TRANSFER_TABLES) out[table] = await store.readRows(table, null, 10_000);
  return out;
}

export function describeTransferRows(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  describe("transfer rows", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("readRows pages a table in key order from after a key, every value a string, number, boolean or null", async () => {
      for (const table of TRANSFER_TABLES) expect(await store.readRows(table, null, 10), `${table} of an empty store`).toEqual([]);
      await populate(h, store);
      const rows = await allRows(store);
      for (const table of TRANSFER_TABLES) {
        expect(rows[table].length, `rows of ${table}`).toBeGreaterThan(0);
        for (const row of rows[table]) for (const [col, v] of Object.entries(row)) expect(v === null || ["string", "number", "boolean"].includes(typeof v), `${table}.${col} = ${String(v)}`).toBe(true);
      }

      expect(rows.runs.map((r) => r.id)).toEqual(["r01", "r02", "r03"]);
      expect((await store.readRows("runs", null, 2)).map((r) => r.id)).toEqual(["r01", "r02"]);
      expect((await store.readRows("runs", ["r02"], 2)).map((r) => r.id)).toEqual(["r03"]);
      expect(await store.readRows("runs", ["r03"], 2)).toEqual([]);
      expect(await store.readRows("runs", null, 0)).toEqual([]);
      const r01 = await store.getRun("r01");
      expect(rows.runs[0]).toMatchObject({ id: "r01", definition: DEF_A, status: "running", fence: 1, lease_owner: "w1", owner_host: "host-t", owner_pid: 77, pause_requested: false, lost_claims: 0, workspace: "/ws/é", session_id: null, turn: null, lease_expires_at: r01?.leaseExpiresAt });
      expect(rows.runs[1]).toMatchObject({ id: "r02", parent_id: "r01", parent_step_id: "kid", pause_requested: true, lease_owner: null, lease_expires_at: null });
      expect(rows.runs[2]).toMatchObject({ id: "r03", session_id: "s01", turn: 1 });

      // A key of several columns: after (r01, 0) come r01's later steps.
      expect(rows.steps.map((s) => [s.run_id, s.seq])).toEqual([["r01", 0], ["r01", 1], ["r01", 2]]);
      expect((await store.readRows("steps", ["r01", 0], 10)).map((s) => s.seq)).toEqual([1, 2]);
      expect(rows.steps[0]).toMatchObject({ step_id: "a", kind: "step", status: "completed", attempt: 1, output: '"a"', checkpoint: '{"k":"v"}', started_at: 1_000, completed_at: 2_000 });

      // A numbered key pages in number order, the same rows as events().
      const events = await store.events();
      expect(rows.events.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
      const first = await store.readRows("events", null, 2);
      const rest = await store.readRows("events", [Number(first[1]?.seq)], 100);
      expect([...first, ...rest]).toEqual(rows.events);
      expect(rows.events[0]).toMatchObject({ run_id: "r01", type: "run.created" });
      // JSON text as the store keeps it: equal as JSON, not necessarily as text.
      expect(JSON.parse(String(rows.events[0]?.data))).toEqual({ n: 1 });

      // Bytes travel as base64 text.
      expect(rows.blobs).toEqual([{ hash: "blob01", size: 40, touched_at: expect.any(Number), data: BYTES.toString("base64") }]);
      expect(rows.holds).toHaveLength(1);
      expect(rows.holds[0]).toMatchObject({ run_id: "r01", kind: "ambiguous_effect", step_id: "b", seq: 1, status: "open", choice: null });
      expect(rows.waits[0]).toMatchObject({ run_id: "r01", name: "ask", kind: "approval", status: "open", seq: 2, request: '{"q":1}', wake_at: null });
      expect(rows.snapshots[0]).toMatchObject({ run_id: "r01", seq: 1, step_id: "b", source: "step", root: "blob01", files: 1, bytes: 40, files_changed: 1, new_bytes: 7, created_at: 1_700_000_000_000 });
      expect(rows.idempotency_keys).toEqual([{ verb: "pause", scope: "r02", key: "k1", digest: "d", summary: "{}", result: "{}", actor: "ann", created_at: expect.any(Number), expires_at: expect.any(Number) }]);
      expect(Number(rows.idempotency_keys[0]?.expires_at) - Number(rows.idempotency_keys[0]?.created_at)).toBe(3_600_000);
      // Tokens travel hashed, as the store keeps them: the transfer is the one reader of every hash.
      expect(rows.tokens).toEqual([{ id: "tok01", name: "ann", role: "viewer", hash: "ab".repeat(32), created_at: 1_700_000_000_000, created_by: "root", revoked_at: null, revoked_by: null, last_used_at: null }]);
    });

    it("writeRows into an empty store keeps every row as given: every table and every read agree with the source", async () => {
      await populate(h, store);
      const source = await allRows(store);
      const target = await h.another();
      for (const table of TRANSFER_TABLES) await target.writeRows(table, source[table]);
      expect(await allRows(target)).toEqual(source);
      for (const id of ["r01", "r02", "r03"]) {
        expect(await target.getRun(id), id).toEqual(await store.getRun(id));
        expect(await target.journal(id), id).toEqual(await store.journal(id));
        expect(await target.waits(id), id).toEqual(await store.waits(id));
        expect(await target.snapshots(id), id).toEqual(await store.snapshots(id));
      }
      expect(await target.holds()).toEqual(await store.holds());
      expect(await target.events()).toEqual(await store.events());
      expect(await target.getBlobs(["blob01"])).toEqual(await store.getBlobs(["blob01"]));
      expect(await target.idempotencyKey("pause", "r02", "k1")).toEqual(await store.idempotencyKey("pause", "r02", "k1"));
      expect(await target.listSessions()).toEqual(await store.listSessions());
      expect(await target.listTokens()).toEqual(await store.listTokens());
      expect(await target.findTokenByHash("ab".repeat(32))).toEqual(await store.findTokenByHash("ab".repeat(32)));
    });

    it("after writeRows the store numbers holds, events and snapshots past the largest imported one", async () => {
      await populate(h, store);
      const source = await allRows(store);
      const target = await h.another();
      for (const table of TRANSFER_TABLES) await target.writeRows(table, source[table]);
      const top = (rows: TransferRow[], col: string) => Math.max(...rows.map((r) => Number(r[col])));
      await target.createRun(newRun("r04", { sessionId: "s01" }), [{ type: "run.created" }]);
      const results = await target.commit([
        [{ runId: "r04", holds: [{ kind: "nondeterminism", reason: "new", details: "{}" }], events: [{ type: "x" }], snapshots: [{ seq: -1, stepId: null, source: "start", root: "blob01", files: 1, bytes: 40, filesChanged: 1, newBytes: 0, notes: null, checkpoint: null, createdAt: 1 }] }],
      ]);
      expect(results).toEqual([{ ok: true, pauseRequested: false }]);
      const [hold] = await target.holds({ runId: "r04" });
      expect(hold?.id).toBeGreaterThan(top(source.holds, "id"));
      const events = await target.events({ runId: "r04" });
      expect(events.map((e) => e.type)).toEqual(["run.created", "x"]);
      for (const e of events) expect(e.seq).toBeGreaterThan(top(source.events, "seq"));
      const [snap] = await target.snapshots("r04");
      expect(snap?.id).toBeGreaterThan(top(source.snapshots, "id"));
      // A session's turns continue from the imported ones.
      expect((await target.getRun("r04"))?.turn).toBe(2);
    });

    it("writeRows is all-or-nothing: a row whose key exists fails the whole call and writes none of it", async () => {
      await populate(h, store);
      const source = await allRows(store);
      const target = await h.another();
      await target.writeRows("runs", []);
      expect(await target.readRows("runs", null, 10)).toEqual([]);
      const [r01, r02] = source.runs;
      if (!r01 || !r02) throw new Error("conformance: populate wrote no runs");
      await target.writeRows("runs", [r01]);
      await expect(target.writeRows("runs", [r02, r01])).rejects.toThrow();
      expect(await target.readRows("runs", null, 10)).toEqual([r01]);
      // Two rows with one key in one call: the same.
      await expect(target.writeRows("runs", [r02, { ...r02, input: '"twin"' }])).rejects.toThrow();
      expect(await target.getRun("r02")).toBeUndefined();

      const [e1, e2] = source.events.filter((e) => e.run_id === "r01");
      if (!e1 || !e2) throw new Error("conformance: populate wrote no events");
      await target.writeRows("events", [e1]);
      await expect(target.writeRows("events", [e2, e1])).rejects.toThrow();
      expect(await target.readRows("events", null, 10)).toEqual([e1]);
      await target.writeRows("events", [e2]);
      expect(await target.readRows("events", null, 10)).toEqual([e1, e2]);
    });
  });
}
