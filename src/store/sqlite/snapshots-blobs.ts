/**
 * Workspace snapshots and content-addressed blobs on SQLite (ports/snapshots-blobs.ts). A delete
 * goes through the connection's `erasing`: its freed bytes are overwritten.
 */
import type { SnapshotsAndBlobs } from "../ports/snapshots-blobs.js";
import { toSnapshot } from "../rows.js";
import type { SqliteConnection } from "./connection.js";
import { toBlob, toBlobInfo } from "../snapshot-rows.js";
import { SQLITE_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import { BLOB_TOUCH_INTERVAL_MS, TERMINAL_STATUSES, type BlobInfo, type BlobRow, type BlobWrite, type SnapshotAt, type SnapshotRow } from "../types.js";

type Raw = Record<string, unknown>;

export function sqliteSnapshotsAndBlobs(c: SqliteConnection): SnapshotsAndBlobs {
  return {
    async putBlobs(blobs: readonly BlobWrite[]): Promise<void> {
      if (blobs.length === 0) return Promise.resolve();
      const now = Date.now();
      const s = c.stmt(
        `INSERT INTO blobs (hash, size, touched_at, data) VALUES (?, ?, ?, ?)
         ON CONFLICT (hash) DO UPDATE SET touched_at = excluded.touched_at WHERE blobs.touched_at < ?`,
      );
      c.written(() => c.db.transaction(() => {
        for (const b of blobs) s.run(b.hash, b.size, now, b.data, now - BLOB_TOUCH_INTERVAL_MS);
      }).immediate());
      return Promise.resolve();
    },
    async missingBlobs(hashes: readonly string[]): Promise<string[]> {
      if (hashes.length === 0) return Promise.resolve([]);
      const now = Date.now();
      const present = new Set<string>();
      const find = c.stmt("SELECT hash FROM blobs WHERE hash IN (SELECT value FROM json_each(?))");
      const touch = c.stmt("UPDATE blobs SET touched_at = ? WHERE hash IN (SELECT value FROM json_each(?)) AND touched_at < ?");
      c.written(() => c.db.transaction(() => {
        for (let i = 0; i < hashes.length; i += 500) {
          const chunk = JSON.stringify(hashes.slice(i, i + 500));
          for (const r of find.all(chunk) as Raw[]) present.add(String(r.hash));
          touch.run(now, chunk, now - BLOB_TOUCH_INTERVAL_MS);
        }
      }).immediate());
      return Promise.resolve([...new Set(hashes)].filter((h) => !present.has(h)));
    },
    getBlobs(hashes: readonly string[]): Promise<BlobRow[]> {
      return c.read(() => {
        const out: BlobRow[] = [];
        for (let i = 0; i < hashes.length; i += 500) {
          const q = reads.blobsByHash(SQL, hashes.slice(i, i + 500));
          for (const r of c.stmt(q.sql).all(...q.params) as Raw[]) out.push(toBlob(r));
        }
        return out;
      });
    },
    snapshots(runId: string): Promise<SnapshotRow[]> {
      return c.read(() => (c.stmt(reads.SNAPSHOTS_OF_RUN).all(runId) as Raw[]).map(toSnapshot));
    },
    getSnapshot(runId: string, at: SnapshotAt): Promise<SnapshotRow | undefined> {
      return c.read(() => {
        const r =
          "seq" in at
            ? (c.stmt(reads.SNAPSHOT_AT_SEQ).get(runId, at.seq) as Raw | undefined)
            : (c.stmt(reads.SNAPSHOT_OF_STEP).get(runId, at.stepId) as Raw | undefined);
        return r ? toSnapshot(r) : undefined;
      });
    },
    snapshotRoots(): Promise<string[]> {
      return c.read(() => (c.stmt(reads.SNAPSHOT_ROOTS).all() as Raw[]).map((r) => String(r.root)));
    },
    async pruneSnapshots(keepSteps: number): Promise<number> {
      const terminal = JSON.stringify(TERMINAL_STATUSES);
      const n = c.erasing(() => c.db.transaction(() => {
        if (keepSteps <= 0) {
          return c.stmt("DELETE FROM snapshots WHERE run_id IN (SELECT id FROM runs WHERE status IN (SELECT value FROM json_each(?)))").run(terminal).changes;
        }
        // The oldest kept seq: the keepSteps-th newest step snapshot's (none: the run keeps everything).
        return c.stmt(
          `DELETE FROM snapshots WHERE run_id IN (SELECT id FROM runs WHERE status IN (SELECT value FROM json_each(?)))
             AND seq < (SELECT k.seq FROM snapshots k WHERE k.run_id = snapshots.run_id AND k.source = 'step' ORDER BY k.seq DESC LIMIT 1 OFFSET ?)`,
        ).run(terminal, keepSteps - 1).changes;
      }).immediate());
      return Promise.resolve(n);
    },
    storeTime(): Promise<number> {
      return Promise.resolve(Date.now());
    },
    listBlobs(after: string | null, limit: number, touchedBefore: number): Promise<BlobInfo[]> {
      return c.read(() => (c.stmt("SELECT hash, size, length(data) AS stored FROM blobs WHERE hash > ? AND touched_at < ? ORDER BY hash LIMIT ?").all(after ?? "", touchedBefore, limit) as Raw[]).map(toBlobInfo));
    },
    async deleteBlobs(hashes: readonly string[], touchedBefore: number): Promise<{ count: number; bytes: number }> {
      const sum = c.stmt("SELECT count(*) AS n, coalesce(sum(length(data)), 0) AS b FROM blobs WHERE hash IN (SELECT value FROM json_each(?)) AND touched_at < ?");
      const del = c.stmt("DELETE FROM blobs WHERE hash IN (SELECT value FROM json_each(?)) AND touched_at < ?");
      const out = c.erasing(() => c.db.transaction(() => {
        let count = 0;
        let bytes = 0;
        for (let i = 0; i < hashes.length; i += 500) {
          const chunk = JSON.stringify(hashes.slice(i, i + 500));
          const r = sum.get(chunk, touchedBefore) as Raw;
          bytes += Number(r.b);
          count += del.run(chunk, touchedBefore).changes;
        }
        return { count, bytes };
      }).immediate());
      return Promise.resolve(out);
    },
  };
}
