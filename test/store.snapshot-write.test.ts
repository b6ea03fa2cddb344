/**
 * SQLite's snapshot write comes from the schema description (mutation/snapshot-write.ts). It must
 * be the statement it replaced, written by hand before, with the parameters in the same order.
 */
import { expect, it } from "vitest";
import { SNAPSHOT_UPSERT_SQL, snapshotParams } from "../src/store/mutation/snapshot-write.js";
import type { SnapshotWrite } from "../src/store/types.js";

const HAND_WRITTEN = `INSERT INTO snapshots (run_id, seq, step_id, source, root, files, bytes, files_changed, new_bytes, notes, checkpoint, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id, seq) WHERE source <> 'settle' DO UPDATE SET step_id = excluded.step_id, source = excluded.source, root = excluded.root,
         files = excluded.files, bytes = excluded.bytes, files_changed = excluded.files_changed, new_bytes = excluded.new_bytes,
         notes = excluded.notes, checkpoint = excluded.checkpoint, created_at = excluded.created_at`;

const words = (sql: string): string => sql.replace(/\s+/g, " ").trim();

it("is the hand-written upsert it replaced", () => {
  expect(words(SNAPSHOT_UPSERT_SQL)).toBe(words(HAND_WRITTEN));
});

it("binds the fields in the statement's column order, null for an absent one", () => {
  const x: SnapshotWrite = { seq: 3, stepId: "s", source: "step", root: "r", files: 4, bytes: 5, filesChanged: 6, newBytes: 7, notes: null, checkpoint: "c", createdAt: 8 };
  expect(snapshotParams("run", x)).toEqual(["run", 3, "s", "step", "r", 4, 5, 6, 7, null, "c", 8]);
  const { checkpoint: _, ...withoutCheckpoint } = x;
  expect(snapshotParams("run", withoutCheckpoint as SnapshotWrite)[10]).toBeNull();
});
