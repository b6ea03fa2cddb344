/**
 * Definitions and the workers that announce them, on SQLite (ports/definitions.ts). Times are the
 * caller's clock (one host).
 */
import { ANNOUNCEMENTS_ORDER, definitionRecords } from "../announcement-records.js";
import type { DefinitionAnnouncements } from "../ports/definitions.js";
import type { AnnouncementRow, DefinitionRow } from "../records.js";
import { toAnnouncement, toDefinition } from "../rows.js";
import * as reads from "../sql/reads.js";
import type { SqliteConnection } from "./connection.js";

type Raw = Record<string, unknown>;

const UPSERT_DEFINITION = `INSERT INTO definitions (name, fingerprint, kind, module, input_schema, first_announced_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (name, fingerprint) DO UPDATE SET kind = excluded.kind, module = excluded.module, input_schema = excluded.input_schema,
     last_seen_at = max(last_seen_at, excluded.last_seen_at)`;
const INSERT_ANNOUNCEMENT = "INSERT INTO announcements (worker_id, name, fingerprint, host, pid, announced_at, seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
const REFRESH_ANNOUNCEMENTS = "UPDATE announcements SET seen_at = ?, expires_at = ? WHERE worker_id = ?";
const REFRESH_DEFINITIONS = `UPDATE definitions SET last_seen_at = ? WHERE last_seen_at < ?
   AND EXISTS (SELECT 1 FROM announcements a WHERE a.worker_id = ? AND a.name = definitions.name AND a.fingerprint = definitions.fingerprint)`;

export function sqliteDefinitions(c: SqliteConnection): DefinitionAnnouncements {
  /** Built once per filter shape (all, by name): a transaction built per call cost a start by name a few µs. */
  const catalogReads: ((params: unknown[]) => [DefinitionRow[], AnnouncementRow[]])[] = [];
  /** One read transaction: both tables from the same snapshot. */
  const catalogRead = (byName: boolean): ((params: unknown[]) => [DefinitionRow[], AnnouncementRow[]]) => {
    const defs = c.stmt(reads.definitionsSql(byName));
    const anns = c.stmt(`SELECT * FROM announcements ${byName ? "WHERE name = ?" : ""} ${ANNOUNCEMENTS_ORDER}`);
    return c.db.transaction((params: unknown[]): [DefinitionRow[], AnnouncementRow[]] => [(defs.all(...params) as Raw[]).map(toDefinition), (anns.all(...params) as Raw[]).map(toAnnouncement)]);
  };
  return {
    announceDefinitions(worker, definitions, ttlMs, now) {
      c.written(() =>
        c.db
          .transaction(() => {
            c.stmt(reads.FORGET_ANNOUNCEMENTS).run(worker.workerId);
            for (const d of definitions) {
              c.stmt(UPSERT_DEFINITION).run(d.name, d.fingerprint, d.kind, d.module, d.inputSchema, now, now);
              c.stmt(INSERT_ANNOUNCEMENT).run(worker.workerId, d.name, d.fingerprint, worker.host, worker.pid, now, now, now + ttlMs);
            }
          })
          .immediate(),
      );
      return Promise.resolve();
    },
    refreshAnnouncements(workerId, ttlMs, now) {
      return Promise.resolve(
        c.written(() =>
          c.db
            .transaction(() => {
              const n = c.stmt(REFRESH_ANNOUNCEMENTS).run(now, now + ttlMs, workerId).changes;
              c.stmt(REFRESH_DEFINITIONS).run(now, now, workerId);
              return n;
            })
            .immediate(),
        ),
      );
    },
    withdrawAnnouncements(workerId) {
      c.written(() => c.stmt(reads.FORGET_ANNOUNCEMENTS).run(workerId));
      return Promise.resolve();
    },
    listDefinitions(filter, now) {
      return c.read(() => {
        const byName = filter.name !== undefined;
        const read = (catalogReads[byName ? 1 : 0] ??= catalogRead(byName));
        const [defs, anns] = read(byName ? [filter.name] : []);
        return definitionRecords(defs, anns.map((a) => ({ ...a, alive: a.expiresAt > now })));
      });
    },
    pruneAnnouncements: (graceMs, now) => Promise.resolve(c.written(() => c.stmt("DELETE FROM announcements WHERE expires_at < ?").run(now - graceMs).changes)),
  };
}
