/**
 * Claims and leases on SQLite (ports/claims.ts): the claim rule's candidates (sql/claim-rule.ts)
 * taken one by one inside an IMMEDIATE transaction, whose write lock on the file already keeps
 * two claimers from taking one run. Lease times are judged by the caller's clock (one host).
 */
import type { ClaimedRun, ClaimRequest, LeaseInfo, RunStatus } from "../records.js";
import type { ClaimsAndLeases } from "../ports/claims.js";
import { toRun } from "../rows.js";
import { claimCandidates, endLease } from "../sql/claim-rule.js";
import { SQLITE_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import type { SqliteConnection } from "./connection.js";

type Raw = Record<string, unknown>;

const TAKE = `UPDATE runs SET status = 'running', fence = fence + 1, lease_owner = ?, lease_expires_at = ?,
     owner_host = ?, owner_pid = ?, owner_start = ?, lost_claims = lost_claims + ?, updated_at = ?
   WHERE id = ? AND fence = ? RETURNING *`;

const RENEW = `UPDATE runs SET lease_expires_at = ?
   WHERE lease_owner = ? AND status = 'running'
     AND (id, fence) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
   RETURNING id`;

export function sqliteClaims(c: SqliteConnection): Omit<ClaimsAndLeases, "leaseClock"> {
  return {
    claim(req: ClaimRequest): Promise<ClaimedRun[]> {
      if (req.limit <= 0 || req.definitions.length === 0) return Promise.resolve([]);
      const run = c.db.transaction((): ClaimedRun[] => {
        const q = claimCandidates(SQL, "r0.id, r0.status, r0.fence", req);
        const candidates = c.stmt(q.sql).all(...q.params) as Raw[];
        const out: ClaimedRun[] = [];
        for (const cand of candidates) {
          const previousStatus = String(cand.status) as RunStatus;
          const row = c
            .stmt(TAKE)
            .get(req.owner.workerId, req.now + req.leaseMs, req.owner.host, req.owner.pid, req.owner.start, previousStatus === "running" ? 1 : 0, req.now, cand.id, cand.fence) as Raw | undefined;
          if (!row) continue;
          const claimed = toRun(row);
          c.insertEvents(
            claimed.id,
            [{ type: "run.claimed", data: { worker: req.owner.workerId, host: req.owner.host, pid: req.owner.pid, fence: claimed.fence, previousStatus } }],
            req.now,
          );
          out.push({ run: claimed, previousStatus, journal: c.journal(claimed.id) });
        }
        return out;
      });
      return c.write(() => run.immediate());
    },

    claimable(req: Omit<ClaimRequest, "owner" | "leaseMs">): Promise<ClaimedRun[]> {
      if (req.limit <= 0 || req.definitions.length === 0) return Promise.resolve([]);
      const q = claimCandidates(SQL, "r0.*", req);
      const read = c.db.transaction(() =>
        (c.stmt(q.sql).all(...q.params) as Raw[]).map((r) => {
          const run = toRun(r);
          return { run, previousStatus: run.status, journal: c.journal(run.id) };
        }),
      );
      return c.read(() => read.deferred());
    },

    renewLeases(owner: string, leases: readonly { runId: string; fence: number }[], leaseMs: number, now: number): Promise<string[]> {
      if (leases.length === 0) return Promise.resolve([]);
      const rows = c.written(() => c.stmt(RENEW).all(now + leaseMs, owner, JSON.stringify(leases.map((l) => [l.runId, l.fence]))) as Raw[]);
      return Promise.resolve(rows.map((r) => String(r.id)));
    },

    leasesOnHost(host: string): Promise<LeaseInfo[]> {
      return c.read(() =>
        (c.stmt(reads.LEASES_ON_HOST).all(host) as Raw[]).map((r) => {
          const run = toRun({ ...r, id: r.id, definition: "", status: "running", input: "", lost_claims: 0, pause_requested: 0, created_at: 0, updated_at: 0 });
          return { runId: run.id, fence: run.fence, leaseOwner: run.leaseOwner ?? "", ownerHost: run.ownerHost, ownerPid: run.ownerPid, ownerStart: run.ownerStart, leaseExpiresAt: run.leaseExpiresAt };
        }),
      );
    },

    async expireLease(runId: string, fence: number, reason: string): Promise<boolean> {
      const now = Date.now();
      const ok = await c.write(() =>
        c.db
          .transaction(() => {
            const q = endLease(SQL, runId, fence, now);
            if (c.stmt(q.sql).run(...q.params).changes === 0) return false;
            c.insertEvents(runId, [{ type: "lease.expired", data: { fence, reason } }], now);
            return true;
          })
          .immediate(),
      );
      if (ok) c.wake();
      return ok;
    },
  };
}
