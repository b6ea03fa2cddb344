/**
 * Claims and leases on Postgres (ports/claims.ts): the claim rule's candidates (sql/claim-rule.ts)
 * locked FOR UPDATE SKIP LOCKED and taken in the same statement, so workers on many hosts claim
 * disjoint runs without waiting on each other's locks. Lease times are the database's clock's.
 */
import type { ClaimedRun, ClaimRequest, LeaseInfo, RunStatus } from "../records.js";
import type { ClaimsAndLeases } from "../ports/claims.js";
import { toRun, toStep } from "../rows.js";
import { claimCandidates, endLease } from "../sql/claim-rule.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import type { PostgresConnection } from "./connection.js";
import { WAKE_CHANNEL } from "./store-names.js";

type Raw = Record<string, unknown>;

const JOURNALS = "SELECT * FROM steps WHERE run_id = ANY($1::text[]) ORDER BY run_id, seq";

export function postgresClaims(pg: PostgresConnection): Omit<ClaimsAndLeases, "leaseClock"> {
  return {
    async claim(req: ClaimRequest): Promise<ClaimedRun[]> {
      if (req.limit <= 0 || req.definitions.length === 0) return [];
      return pg.transaction(async (c) => {
        const candidates = claimCandidates(SQL, "r0.id, r0.status AS prev", req);
        // No race in the session condition: it is monotone (see earlierTurnsEnded), so a turn found
        // claimable in this statement's snapshot is still claimable when its row is locked and
        // updated. A stale "not yet" (an earlier turn ending in a transaction this snapshot misses)
        // only delays the claim until runs_turn_ended's NOTIFY or the next poll.
        const rows = (
          await c.query(
            SQL.text(`WITH c AS (
               ${candidates.sql} FOR UPDATE SKIP LOCKED
             )
             UPDATE runs r SET status = 'running', fence = r.fence + 1, lease_owner = ?, lease_expires_at = stead_now_ms() + ?,
               owner_host = ?, owner_pid = ?, owner_start = ?,
               lost_claims = r.lost_claims + CASE WHEN c.prev = 'running' THEN 1 ELSE 0 END, updated_at = stead_now_ms()
             FROM c WHERE r.id = c.id
             RETURNING r.*, c.prev AS previous_status`),
            [...candidates.params, req.owner.workerId, req.leaseMs, req.owner.host, req.owner.pid, req.owner.start],
          )
        ).rows as Raw[];
        if (rows.length === 0) return [];
        const claimed = rows
          .map((r) => ({ run: toRun(r), previousStatus: String(r.previous_status) as RunStatus }))
          .sort((a, b) => a.run.createdAt - b.run.createdAt || (a.run.id < b.run.id ? -1 : 1));
        await c.query(
          `INSERT INTO events (run_id, type, at, data)
           SELECT id, 'run.claimed', stead_now_ms(), data FROM unnest($1::text[], $2::text[]) AS t(id, data)`,
          [
            claimed.map((x) => x.run.id),
            claimed.map((x) => JSON.stringify({ worker: req.owner.workerId, host: req.owner.host, pid: req.owner.pid, fence: x.run.fence, previousStatus: x.previousStatus })),
          ],
        );
        const steps = ((await c.query(JOURNALS, [claimed.map((x) => x.run.id)])).rows as Raw[]).map(toStep);
        return claimed.map((x) => ({ ...x, journal: steps.filter((s) => s.runId === x.run.id) }));
      });
    },

    async claimable(req: Omit<ClaimRequest, "owner" | "leaseMs">): Promise<ClaimedRun[]> {
      if (req.limit <= 0 || req.definitions.length === 0) return [];
      const q = claimCandidates(SQL, "r0.*", req);
      return pg.transaction(async (c) => {
        const runs = ((await c.query(SQL.text(q.sql), q.params)).rows as Raw[]).map(toRun);
        if (runs.length === 0) return [];
        const steps = ((await c.query(JOURNALS, [runs.map((r) => r.id)])).rows as Raw[]).map(toStep);
        return runs.map((run) => ({ run, previousStatus: run.status, journal: steps.filter((s) => s.runId === run.id) }));
      });
    },

    async renewLeases(owner: string, leases: readonly { runId: string; fence: number }[], leaseMs: number): Promise<string[]> {
      if (leases.length === 0) return [];
      const rows = await pg.query(
        `UPDATE runs r SET lease_expires_at = stead_now_ms() + $2
         FROM unnest($3::text[], $4::bigint[]) AS l(id, fence)
         WHERE r.id = l.id AND r.fence = l.fence AND r.lease_owner = $1 AND r.status = 'running'
         RETURNING r.id`,
        [owner, leaseMs, leases.map((l) => l.runId), leases.map((l) => l.fence)],
      );
      return rows.map((r) => String(r.id));
    },

    async leasesOnHost(host: string): Promise<LeaseInfo[]> {
      const rows = await pg.query(SQL.text(reads.LEASES_ON_HOST), [host]);
      return rows.map((r) => {
        const run = toRun({ ...r, definition: "", status: "running", input: "", lost_claims: 0, pause_requested: false, created_at: 0, updated_at: 0 });
        return { runId: run.id, fence: run.fence, leaseOwner: run.leaseOwner ?? "", ownerHost: run.ownerHost, ownerPid: run.ownerPid, ownerStart: run.ownerStart, leaseExpiresAt: run.leaseExpiresAt };
      });
    },

    async expireLease(runId: string, fence: number, reason: string): Promise<boolean> {
      return pg.transaction(async (c) => {
        const q = endLease(SQL, runId, fence, Date.now());
        const r = await c.query(SQL.text(q.sql), q.params);
        if (!r.rowCount) return false;
        await c.query("INSERT INTO events (run_id, type, at, data) VALUES ($1, 'lease.expired', stead_now_ms(), $2)", [runId, JSON.stringify({ fence, reason })]);
        await c.query("SELECT pg_notify($1, '')", [WAKE_CHANNEL]);
        return true;
      });
    },
  };
}
