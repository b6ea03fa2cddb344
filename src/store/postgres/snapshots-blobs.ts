/**
 * Workspace snapshots and content-addressed blobs on Postgres (ports/snapshots-blobs.ts); times
 * are the database's clock.
 */
import type { SnapshotsAndBlobs } from "../ports/snapshots-blobs.js";
import { toSnapshot } from "../rows.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import type { PostgresConnection } from "./connection.js";
import { toBlob, toBlobInfo } from "../snapshot-rows.js";
import { BLOB_TOUCH_INTERVAL_MS, TERMINAL_STATUSES, type BlobInfo, type BlobRow, type BlobWrite, type SnapshotAt, type SnapshotRow } from "../types.js";

export function postgresSnapshotsAndBlobs(pg: PostgresConnection): SnapshotsAndBlobs {
  return {
    async putBlobs(blobs: readonly BlobWrite[]): Promise<void> {
      if (blobs.length === 0) return;
      // Batches of about 8 MB per statement; each statement is its own transaction (insert if absent is idempotent).
      for (let i = 0; i < blobs.length; ) {
        const batch: BlobWrite[] = [];
        let bytes = 0;
        while (i < blobs.length && (batch.length === 0 || bytes + (blobs[i]?.data.byteLength ?? 0) <= 8 * 1024 * 1024)) {
          const b = blobs[i++] as BlobWrite;
          batch.push(b);
          bytes += b.data.byteLength;
        }
        await pg.query(
          `INSERT INTO blobs (hash, size, touched_at, data)
           SELECT h, s, stead_now_ms(), d FROM unnest($1::text[], $2::bigint[], $3::bytea[]) AS t(h, s, d)
           ON CONFLICT (hash) DO UPDATE SET touched_at = excluded.touched_at WHERE blobs.touched_at < excluded.touched_at - $4`,
          [batch.map((b) => b.hash), batch.map((b) => b.size), batch.map((b) => Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength)), BLOB_TOUCH_INTERVAL_MS],
        );
      }
    },
    async missingBlobs(hashes: readonly string[]): Promise<string[]> {
      if (hashes.length === 0) return [];
      const present = new Set<string>();
      for (let i = 0; i < hashes.length; i += 5000) {
        const chunk = hashes.slice(i, i + 5000);
        const rows = await pg.query(
          `WITH p AS (SELECT hash, touched_at FROM blobs WHERE hash = ANY($1::text[])),
           t AS (UPDATE blobs b SET touched_at = stead_now_ms() FROM p WHERE b.hash = p.hash AND p.touched_at < stead_now_ms() - $2)
           SELECT hash FROM p`,
          [chunk, BLOB_TOUCH_INTERVAL_MS],
        );
        for (const r of rows) present.add(String(r.hash));
      }
      return [...new Set(hashes)].filter((h) => !present.has(h));
    },
    async getBlobs(hashes: readonly string[]): Promise<BlobRow[]> {
      const out: BlobRow[] = [];
      for (let i = 0; i < hashes.length; i += 500) {
        const q = reads.blobsByHash(SQL, hashes.slice(i, i + 500));
        const rows = await pg.query(SQL.text(q.sql), q.params);
        for (const r of rows) out.push(toBlob(r));
      }
      return out;
    },
    async snapshots(runId: string): Promise<SnapshotRow[]> {
      return (await pg.query(SQL.text(reads.SNAPSHOTS_OF_RUN), [runId])).map(toSnapshot);
    },
    async getSnapshot(runId: string, at: SnapshotAt): Promise<SnapshotRow | undefined> {
      const [r] =
        "seq" in at
          ? await pg.query(SQL.text(reads.SNAPSHOT_AT_SEQ), [runId, at.seq])
          : await pg.query(SQL.text(reads.SNAPSHOT_OF_STEP), [runId, at.stepId]);
      return r ? toSnapshot(r) : undefined;
    },
    async snapshotRoots(): Promise<string[]> {
      return (await pg.query(reads.SNAPSHOT_ROOTS)).map((r) => String(r.root));
    },
    async pruneSnapshots(keepSteps: number): Promise<number> {
      const rows =
        keepSteps <= 0
          ? await pg.query("WITH d AS (DELETE FROM snapshots WHERE run_id IN (SELECT id FROM runs WHERE status = ANY($1::text[])) RETURNING 1) SELECT count(*)::int AS n FROM d", [TERMINAL_STATUSES])
          : await pg.query(
              // The oldest kept seq: the keepSteps-th newest step snapshot's (none: the run keeps everything).
              `WITH d AS (
                 DELETE FROM snapshots s WHERE s.run_id IN (SELECT id FROM runs WHERE status = ANY($1::text[]))
                   AND s.seq < (SELECT k.seq FROM snapshots k WHERE k.run_id = s.run_id AND k.source = 'step' ORDER BY k.seq DESC LIMIT 1 OFFSET $2)
                 RETURNING 1)
               SELECT count(*)::int AS n FROM d`,
              [TERMINAL_STATUSES, keepSteps - 1],
            );
      return Number(rows[0]?.n ?? 0);
    },
    async storeTime(): Promise<number> {
      const [r] = await pg.query("SELECT stead_now_ms() AS t");
      return Number(r?.t);
    },
    async listBlobs(after: string | null, limit: number, touchedBefore: number): Promise<BlobInfo[]> {
      const rows = await pg.query(
        "SELECT hash, size, octet_length(data) AS stored FROM blobs WHERE ($1::text IS NULL OR hash > $1) AND touched_at < $2 ORDER BY hash LIMIT $3",
        [after, touchedBefore, limit],
      );
      return rows.map(toBlobInfo);
    },
    async deleteBlobs(hashes: readonly string[], touchedBefore: number): Promise<{ count: number; bytes: number }> {
      let count = 0;
      let bytes = 0;
      for (let i = 0; i < hashes.length; i += 5000) {
        const [r] = await pg.query(
          "WITH d AS (DELETE FROM blobs WHERE hash = ANY($1::text[]) AND touched_at < $2 RETURNING octet_length(data) AS b) SELECT count(*)::int AS n, coalesce(sum(b), 0)::bigint AS b FROM d",
          [hashes.slice(i, i + 5000), touchedBefore],
        );
        count += Number(r?.n ?? 0);
        bytes += Number(r?.b ?? 0);
      }
      return { count, bytes };
    },
  };
}
