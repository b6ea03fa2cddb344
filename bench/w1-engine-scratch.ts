/**
 * Scratch, not part of `npm run bench`: W1 as the bench runs it (bench/w1-sequential.ts: the built
 * engine and worker, 1000 sequential steps of ~1 KB), with the Postgres store's one-step commits
 * sent as candidate statements instead, each W1 run paired with a raw reference run just before it
 * on the same embedded server (as bench/postgres-suite.ts pairs them). Variants rotate through the
 * rounds. A candidate replaces `commit` on a store instance of dist/ for units of one mutation with
 * one step and one event under a lease (every W1 step); anything else goes to the store as built.
 *
 *   npm run build && node --import tsx bench/w1-engine-scratch.ts [rounds=7]
 *   VARIANTS=0,2 ...  only these (by index)
 */
import pg from "pg";
import type { Store, Unit, UnitResult } from "../src/index.js";
import { createDatabase, databaseName, dropDatabase, withDatabase } from "../test/setup/databases.js";
import { adminUrlOf, createEmbeddedServer } from "../test/setup/embedded-server.js";
import { stead as lib } from "./lib.js";
import { rawPostgresSequential } from "./raw-postgres.js";
import { fmt, median } from "./report.js";
import { steadSequential } from "./w1-sequential.js";

const ROUNDS = Number(process.argv[2] ?? 7);
const STEPS = 1000;

const STEP_COLS = "run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint";
const UPSERT = `ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status,
    attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at,
    checkpoint = excluded.checkpoint`;
// $1 run, $2 fence, $3 owner, $4 lostClaims, $5..$14 the step, $15/$16 the event's type and data.
const LOCK = `r AS (
    SELECT lost_claims, pause_requested FROM runs WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE
  ), u AS (
    UPDATE runs SET lost_claims = $4::int, updated_at = stead_now_ms() FROM r WHERE runs.id = $1 AND r.lost_claims <> $4::int
  )`;
const STEP = "$1, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14";
const TAIL = "SELECT EXISTS (SELECT 1 FROM r) AS ok, (SELECT pause_requested FROM r) AS pause";
const UNUSED = "$15::text IS NULL AND $16::text IS NULL AS unused";

interface Candidate {
  name: string;
  /** null: the commit returns at once without the database (the engine's own cost). */
  sql: string | null;
  ddl?: string;
}

const CANDIDATES: Candidate[] = [
  {
    name: "scalar + (a): event row, no token",
    sql: `WITH ${LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${STEP} FROM r ${UPSERT}),
      e AS (INSERT INTO events (run_id, type, at, data) SELECT $1, $15, stead_now_ms(), $16::jsonb::text FROM r) ${TAIL}`,
  },
  {
    name: "scalar + (a)+(b): event in step row",
    ddl: "ALTER TABLE steps ADD COLUMN IF NOT EXISTS event_seq BIGINT, ADD COLUMN IF NOT EXISTS event_at BIGINT",
    sql: `WITH ${LOCK}, s AS (INSERT INTO steps (${STEP_COLS}, event_seq, event_at) SELECT ${STEP}, nextval('events_seq_seq'), stead_now_ms() FROM r
      ${UPSERT}, event_seq = excluded.event_seq, event_at = excluded.event_at) ${TAIL}, ${UNUSED}`,
  },
  { name: "floor: lock + step row only", sql: `WITH ${LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${STEP} FROM r ${UPSERT}) ${TAIL}, ${UNUSED}` },
  {
    name: "lock + plain step INSERT (no upsert, u)",
    sql: `WITH r AS (SELECT pause_requested FROM runs WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE),
      s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${STEP} FROM r) ${TAIL}, $4::int IS NULL, ${UNUSED}`,
  },
  { name: "unsafe: bare step INSERT", sql: `INSERT INTO steps (${STEP_COLS}) VALUES (${STEP}) RETURNING true AS ok, false AS pause, $2::bigint IS NULL, $3::text IS NULL, $4::int IS NULL, ${UNUSED}` },
  { name: "engine alone: commit skips the database", sql: null },
];

function candidateStore(url: string, c: Candidate): Store {
  const store = lib.openPostgresStore({ connectionString: url });
  const built = store.commit.bind(store);
  // The store's own pool: the same connections, settings and pool path as a real commit.
  const pool = (store as unknown as { pool: pg.Pool }).pool;
  let ready = !c.ddl;
  store.commit = async (units: Unit[], options) => {
    const m = units.length === 1 && units[0]?.length === 1 ? units[0][0] : undefined;
    const st = m?.steps?.length === 1 ? m.steps[0] : undefined;
    const ev = m?.events?.length === 1 ? m.events[0] : undefined;
    const lease = m?.expect?.lease;
    if (!m || !st || !ev || !lease || options?.beforeCommit || m.snapshots?.length) return built(units, options);
    if (c.sql === null) return [{ ok: true, pauseRequested: false }];
    if (!ready && c.ddl) {
      await pool.query(c.ddl);
      ready = true;
    }
    const values = [
      m.runId,
      lease.fence,
      lease.owner,
      m.run?.lostClaims ?? null,
      st.seq,
      st.stepId,
      st.kind,
      st.status,
      st.attempt,
      st.output ?? null,
      st.error ?? null,
      st.startedAt,
      st.completedAt ?? null,
      st.checkpoint ?? null,
      ev.type,
      ev.data === undefined ? "{}" : JSON.stringify(ev.data),
    ];
    const row = (await pool.query({ name: `w1-${CANDIDATES.indexOf(c)}`, text: c.sql, values })).rows[0] as { ok: boolean; pause: boolean | null } | undefined;
    const result: UnitResult = row?.ok ? { ok: true, pauseRequested: row.pause === true } : { ok: false, reason: "lease", runId: m.runId };
    return [result];
  };
  return store;
}

const embedded = await createEmbeddedServer();
const adminUrl = adminUrlOf(embedded.handle);

async function inDatabase<T>(label: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = databaseName("w1e", label);
  await createDatabase(adminUrl, name);
  try {
    return await fn(withDatabase(adminUrl, name));
  } finally {
    await dropDatabase(adminUrl, name);
  }
}

const variants: { name: string; make: (url: string) => Store }[] = [
  { name: "store as built (dist/)", make: (url) => lib.openPostgresStore({ connectionString: url }) },
  ...CANDIDATES.map((c) => ({ name: c.name, make: (url: string) => candidateStore(url, c) })),
];
const only = process.env.VARIANTS ? new Set(process.env.VARIANTS.split(",").map(Number)) : undefined;
const chosen = variants.filter((_, i) => !only || only.has(i));

try {
  const stats = new Map<string, { us: number[]; ratio: number[]; commit: number[] }>();
  await inDatabase("raw", async (rawUrl) => {
    for (let round = 0; round < ROUNDS; round++) {
      const line: string[] = [];
      for (let k = 0; k < chosen.length; k++) {
        const v = chosen[(k + round) % chosen.length] as (typeof chosen)[number];
        const raw = (await rawPostgresSequential(rawUrl, STEPS)).usPerCommit;
        const r = await inDatabase("w1", async (url) => {
          const store = v.make(url);
          try {
            return await steadSequential(store, STEPS, { timeCommits: true });
          } finally {
            await store.close();
          }
        });
        const e = stats.get(v.name) ?? { us: [], ratio: [], commit: [] };
        e.us.push(r.usPerStep);
        e.ratio.push(r.usPerStep / raw);
        e.commit.push(r.commitUsPerStep);
        stats.set(v.name, e);
        line.push(`${fmt(r.usPerStep)}/${fmt(raw)}`);
      }
      console.log(`round ${round + 1} (stead/raw µs, in rotated order): ${line.join(", ")}`);
    }
  });
  console.log("");
  for (const v of chosen) {
    const e = stats.get(v.name);
    if (!e) continue;
    console.log(
      `${v.name.padEnd(40)} ${fmt(median(e.us)).padStart(5)} µs/step (store.commit ${fmt(median(e.commit))}, rest ${fmt(median(e.us) - median(e.commit))})  ratio ${fmt(median(e.ratio), 2)}x [${e.ratio.map((x) => fmt(x, 2)).join(" ")}]`,
    );
  }
} finally {
  await embedded.destroy();
}
