/**
 * Definitions and the workers that announce them, on Postgres (ports/definitions.ts). Times are
 * the database's clock, never a worker's: `now` arguments are ignored.
 */
import type pg from "pg";
import { ANNOUNCEMENTS_ORDER, definitionRecords } from "../announcement-records.js";
import type { DefinitionAnnouncements } from "../ports/definitions.js";
import type { DefinitionAnnouncement } from "../records.js";
import { toAnnouncement, toDefinition } from "../rows.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import type { PostgresConnection } from "./connection.js";

type Raw = Record<string, unknown>;

/** One time for a whole write (stead_now_ms() moves within a transaction). */
async function storeNow(c: pg.PoolClient): Promise<number> {
  return Number(((await c.query("SELECT stead_now_ms() AS t")).rows[0] as { t?: unknown } | undefined)?.t);
}

export function postgresDefinitions(pg: PostgresConnection): DefinitionAnnouncements {
  return {
    async announceDefinitions(worker, definitions, ttlMs) {
      // Catalog rows are locked in one order by every announcer: two workers announcing the same
      // definitions at once cannot deadlock.
      const defs = [...definitions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0));
      const column = <K extends keyof DefinitionAnnouncement>(k: K) => defs.map((d) => d[k]);
      await pg.transaction(async (c) => {
        const now = await storeNow(c);
        await c.query(SQL.text(reads.FORGET_ANNOUNCEMENTS), [worker.workerId]);
        if (defs.length === 0) return;
        await c.query(
          `INSERT INTO definitions (name, fingerprint, kind, module, input_schema, first_announced_at, last_seen_at)
           SELECT n, f, k, m, s, $6::bigint, $6::bigint FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(n, f, k, m, s, i)
           ORDER BY i
           ON CONFLICT (name, fingerprint) DO UPDATE SET kind = excluded.kind, module = excluded.module, input_schema = excluded.input_schema,
             last_seen_at = greatest(definitions.last_seen_at, excluded.last_seen_at)`,
          [column("name"), column("fingerprint"), column("kind"), column("module"), column("inputSchema"), now],
        );
        await c.query(
          `INSERT INTO announcements (worker_id, name, fingerprint, host, pid, announced_at, seen_at, expires_at)
           SELECT $1::text, n, f, $4::text, $5::int, $6::bigint, $6::bigint, $6::bigint + $7::bigint FROM unnest($2::text[], $3::text[]) AS t(n, f)`,
          [worker.workerId, column("name"), column("fingerprint"), worker.host, worker.pid, now, ttlMs],
        );
      });
    },

    async refreshAnnouncements(workerId, ttlMs) {
      return pg.transaction(async (c) => {
        const now = await storeNow(c);
        const n = (await c.query("UPDATE announcements SET seen_at = $2::bigint, expires_at = $2::bigint + $3::bigint WHERE worker_id = $1", [workerId, now, ttlMs])).rowCount ?? 0;
        await c.query(
          `UPDATE definitions d SET last_seen_at = $2::bigint FROM announcements a
           WHERE a.worker_id = $1 AND a.name = d.name AND a.fingerprint = d.fingerprint AND d.last_seen_at < $2::bigint`,
          [workerId, now],
        );
        return n;
      });
    },

    async withdrawAnnouncements(workerId) {
      await pg.query(SQL.text(reads.FORGET_ANNOUNCEMENTS), [workerId]);
    },

    async listDefinitions(filter) {
      const byName = filter.name !== undefined;
      const params = byName ? [filter.name] : [];
      // Both tables from one snapshot, and liveness by the database's clock, not this host's.
      const [defs, anns] = await pg.snapshot(async (c) => [
        (await c.query(SQL.text(reads.definitionsSql(byName)), params)).rows as Raw[],
        (await c.query(`SELECT *, expires_at > stead_now_ms() AS alive FROM announcements ${byName ? "WHERE name = $1" : ""} ${ANNOUNCEMENTS_ORDER}`, params)).rows as Raw[],
      ]);
      return definitionRecords(defs.map(toDefinition), anns.map((a) => ({ ...toAnnouncement(a), alive: a.alive === true })));
    },

    async pruneAnnouncements(graceMs) {
      const [r] = await pg.query("WITH d AS (DELETE FROM announcements WHERE expires_at < stead_now_ms() - $1::bigint RETURNING 1) SELECT count(*)::int AS n FROM d", [graceMs]);
      return Number(r?.n ?? 0);
    },
  };
}
