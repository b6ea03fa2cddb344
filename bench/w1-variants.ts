/**
 * Scratch, not part of `npm run bench`: what each cut to the Postgres step commit (STEP_COMMIT_SQL
 * in src/store/postgres/postgres-store.ts) buys, statement by statement, against the raw reference
 * (bench/raw-postgres.ts: one autocommit INSERT of a 1 KB row) on one embedded server.
 *
 * Every variant gets a fresh migrated store with one running run, and its own connection; the raw
 * reference its own database. Within a round the steps go in blocks of BLOCK, every variant taking
 * its block in a rotating order, so a burst of load elsewhere on the machine falls on all of them
 * alike. Per variant: wall µs per statement, ratio to raw in the same round, the server backend's
 * CPU µs per statement (from /proc/<pid>/schedstat: counts the WAL flush syscalls too, not the
 * time waiting for the disk), and WAL bytes per statement.
 *
 *   node --import tsx bench/w1-variants.ts [rounds=5] [steps=1000] [block=50]
 *   VARIANTS=0,5,7 ...  only these (by index); STORE=1 adds store.commit of src/ as it is.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import type { Store } from "../src/index.js";
import { openPostgresStore } from "../src/store/postgres/index.js";
import { createDatabase, databaseName, dropDatabase, withDatabase } from "../test/setup/databases.js";
import { adminUrlOf, createEmbeddedServer } from "../test/setup/embedded-server.js";
import { fmt, median, stepResult } from "./report.js";

const ROUNDS = Number(process.argv[2] ?? 5);
const STEPS = Number(process.argv[3] ?? 1000);
const BLOCK = Number(process.argv[4] ?? 50);

const RUN = ["run-1", 1, "worker-1"] as const;
const STEP_COLS = "run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint";
const UPSERT = `ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status,
    attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at,
    checkpoint = excluded.checkpoint`;
/** (b): the step.completed event lives in the step row: a number from the events sequence and the event time. */
const EVENT_COLS = "ALTER TABLE steps ADD COLUMN event_seq BIGINT, ADD COLUMN event_at BIGINT";
const UPSERT_B = `${UPSERT}, event_seq = excluded.event_seq, event_at = excluded.event_at`;

// ---- the released statement, with JSON parameters ($4 steps, $5 events, $6 token, $7 lostClaims)
const J_LOCK = `r AS (
  SELECT id, pause_requested, lost_claims FROM runs
  WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE
), u AS (
  UPDATE runs SET lost_claims = $7::int, updated_at = stead_now_ms()
  WHERE id = $1 AND $7::int IS NOT NULL AND EXISTS (SELECT 1 FROM r WHERE r.lost_claims <> $7::int)
)`;
const J_SEL = `$1, x.seq, x."stepId", x.kind, x.status, x.attempt, x.output, x.error, x."startedAt", x."completedAt", x.checkpoint`;
const J_FROM = `FROM r, jsonb_to_recordset($4::jsonb) AS x(seq int, "stepId" text, kind text, status text, attempt int, output text, error text, "startedAt" bigint, "completedAt" bigint, checkpoint text)`;
const J_EVENTS = `e AS (
  INSERT INTO events (run_id, type, at, data)
  SELECT $1, x.e->>'type', stead_now_ms(), coalesce(x.e->'data', '{}'::jsonb)::text
  FROM r, jsonb_array_elements($5::jsonb) WITH ORDINALITY AS x(e, i) ORDER BY x.i
)`;
const J_RES = `res AS (
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM r) THEN jsonb_build_array(jsonb_build_object('ok', true, 'pauseRequested', (SELECT pause_requested FROM r)))
    WHEN EXISTS (SELECT 1 FROM runs WHERE id = $1) THEN jsonb_build_array(jsonb_build_object('ok', false, 'reason', 'lease', 'runId', $1::text, 'status', (SELECT status FROM runs WHERE id = $1)))
    ELSE jsonb_build_array(jsonb_build_object('ok', false, 'reason', 'missing', 'runId', $1::text))
  END AS r
)`;
const J_TOKEN = `c AS (INSERT INTO stead_commits (token, results, at) SELECT $6, res.r::text, stead_now_ms() FROM res)`;
const jsonValues = (i: number, t0: number) => [
  ...RUN,
  JSON.stringify([{ seq: i + 1, stepId: `s-${i}`, kind: "step", status: "completed", attempt: 1, output: JSON.stringify(stepResult(i)), error: null, startedAt: t0, completedAt: t0 + 1, checkpoint: null }]),
  JSON.stringify([{ type: "step.completed", data: { step: `s-${i}`, seq: i + 1, attempt: 1, ms: 1 } }]),
  randomUUID(),
  0,
];

// ---- the same write with scalar parameters: $4 lostClaims, $5..$14 the step, $15/$16 the event, $17 token
const S_LOCK = `r AS (
    SELECT lost_claims, pause_requested FROM runs WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE
  ), u AS (
    UPDATE runs SET lost_claims = $4::int, updated_at = stead_now_ms() FROM r WHERE runs.id = $1 AND r.lost_claims <> $4::int
  )`;
const S_STEP = "$1, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14";
const S_EVENT = "e AS (INSERT INTO events (run_id, type, at, data) SELECT $1, $15, stead_now_ms(), $16::jsonb::text FROM r)";
const S_TAIL = `SELECT EXISTS (SELECT 1 FROM r) AS ok, (SELECT pause_requested FROM r) AS pause,
    CASE WHEN NOT EXISTS (SELECT 1 FROM r) THEN (SELECT status FROM runs WHERE id = $1) END AS status`;
/** Parameters a variant does not use are still sent (and referenced) so all send the same bytes. */
const UNUSED = "$15::text IS NULL AND $16::text IS NULL AND $17::text IS NULL AS unused";
const scalarValues = (i: number, t0: number) => [
  ...RUN,
  0,
  i + 1,
  `s-${i}`,
  "step",
  "completed",
  1,
  JSON.stringify(stepResult(i)),
  null,
  t0,
  t0 + 1,
  null,
  "step.completed",
  JSON.stringify({ step: `s-${i}`, seq: i + 1, attempt: 1, ms: 1 }),
  randomUUID(),
];

interface Variant {
  name: string;
  /** DDL on the fresh store before the run. */
  ddl?: string;
  sql: string;
  values(i: number, t0: number): unknown[];
}

const VARIANTS: Variant[] = [
  {
    name: "0 released STEP_COMMIT_SQL",
    sql: `WITH ${J_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${J_SEL} ${J_FROM} ${UPSERT}), ${J_EVENTS}, ${J_RES}, ${J_TOKEN} SELECT res.r FROM res`,
    values: jsonValues,
  },
  {
    name: "1 (a) no token",
    sql: `WITH ${J_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${J_SEL} ${J_FROM} ${UPSERT}), ${J_EVENTS}, ${J_RES} SELECT res.r, $6::text IS NULL FROM res`,
    values: jsonValues,
  },
  {
    name: "2 (b) event in the step row",
    ddl: EVENT_COLS,
    sql: `WITH ${J_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}, event_seq, event_at) SELECT ${J_SEL}, nextval('events_seq_seq'), stead_now_ms() ${J_FROM} ${UPSERT_B}), ${J_RES}, ${J_TOKEN} SELECT res.r, $5::text IS NULL FROM res`,
    values: jsonValues,
  },
  {
    name: "3 (a)+(b)",
    ddl: EVENT_COLS,
    sql: `WITH ${J_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}, event_seq, event_at) SELECT ${J_SEL}, nextval('events_seq_seq'), stead_now_ms() ${J_FROM} ${UPSERT_B}), ${J_RES} SELECT res.r, $5::text IS NULL, $6::text IS NULL FROM res`,
    values: jsonValues,
  },
  {
    name: "4 scalar params (event + token)",
    sql: `WITH ${S_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${S_STEP} FROM r ${UPSERT}), ${S_EVENT},
      c AS (INSERT INTO stead_commits (token, results, at) SELECT $17, '[]', stead_now_ms()) ${S_TAIL}`,
    values: scalarValues,
  },
  {
    name: "5 scalar + (a)",
    sql: `WITH ${S_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${S_STEP} FROM r ${UPSERT}), ${S_EVENT} ${S_TAIL}, $17::text IS NULL`,
    values: scalarValues,
  },
  {
    name: "6 scalar + (a)+(b)",
    ddl: EVENT_COLS,
    sql: `WITH ${S_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}, event_seq, event_at) SELECT ${S_STEP}, nextval('events_seq_seq'), stead_now_ms() FROM r ${UPSERT_B}) ${S_TAIL}, ${UNUSED}`,
    values: scalarValues,
  },
  {
    name: "7 floor: lock + step row only",
    sql: `WITH ${S_LOCK}, s AS (INSERT INTO steps (${STEP_COLS}) SELECT ${S_STEP} FROM r ${UPSERT}) ${S_TAIL}, ${UNUSED}`,
    values: scalarValues,
  },
  {
    name: "8 unsafe: bare step INSERT",
    sql: `INSERT INTO steps (${STEP_COLS}) VALUES (${S_STEP}) RETURNING $2::bigint IS NULL, $3::text IS NULL, $4::int IS NULL, ${UNUSED}`,
    values: scalarValues,
  },
];

/** CPU time of a server backend so far, in µs. */
function backendCpuUs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000;
}

interface Subject {
  name: string;
  /** The server backend doing the work. */
  pid: number;
  /** A side connection to the same database, for the WAL position. */
  side: pg.Client;
  step(i: number): Promise<unknown>;
  close(): Promise<void>;
}

const RUN_ROW =
  "INSERT INTO runs (id, definition, status, input, fence, lease_owner, lease_expires_at, created_at, updated_at) VALUES ('run-1', 'd', 'running', '{}', 1, 'worker-1', 9e15, 0, 0)";

const embedded = await createEmbeddedServer();
const adminUrl = adminUrlOf(embedded.handle);

async function database(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = databaseName("w1v", label);
  await createDatabase(adminUrl, name);
  return { url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) };
}

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

const pidOf = async (c: pg.Client) => Number((await c.query<{ p: number }>("SELECT pg_backend_pid() AS p")).rows[0]?.p);

async function statementSubject(v: Variant): Promise<Subject> {
  const db = await database("variant");
  const store = openPostgresStore({ connectionString: db.url });
  await store.migrate();
  await store.close();
  const client = await connect(db.url);
  if (v.ddl) await client.query(v.ddl);
  await client.query(RUN_ROW);
  const side = await connect(db.url);
  const t0 = Date.now();
  const name = `v${randomUUID().slice(0, 8)}`;
  return {
    name: v.name,
    pid: await pidOf(client),
    side,
    step: (i) => client.query({ name, text: v.sql, values: v.values(i, t0) }),
    async close() {
      const n = Number((await side.query<{ n: string }>("SELECT count(*) AS n FROM steps")).rows[0]?.n);
      if (n !== STEPS) throw new Error(`${v.name}: ${n} steps written, expected ${STEPS}`);
      await client.end();
      await side.end();
      await db.drop();
    },
  };
}

async function rawSubject(): Promise<Subject> {
  const db = await database("raw");
  const client = await connect(db.url);
  await client.query("CREATE TABLE results (id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
  const side = await connect(db.url);
  return {
    name: "raw",
    pid: await pidOf(client),
    side,
    step: (i) => client.query({ name: "raw-insert", text: "INSERT INTO results (run_id, seq, body) VALUES ($1, $2, $3)", values: ["raw", i, JSON.stringify(stepResult(i))] }),
    async close() {
      await client.end();
      await side.end();
      await db.drop();
    },
  };
}

/** store.commit of src/ as it is, with the unit the engine writes for a completed step. */
async function storeSubject(): Promise<Subject> {
  const db = await database("store");
  const store: Store = openPostgresStore({ connectionString: db.url });
  await store.migrate();
  const side = await connect(db.url);
  await side.query(RUN_ROW);
  await store.storeTime();
  const pid = Number((await side.query<{ p: number }>("SELECT pid AS p FROM pg_stat_activity WHERE application_name = 'stead' AND datname = current_database()")).rows[0]?.p);
  const t0 = Date.now();
  return {
    name: "store.commit (src as is)",
    pid,
    side,
    async step(i) {
      const unit = {
        runId: "run-1",
        expect: { lease: { fence: 1, owner: "worker-1" } },
        steps: [{ seq: i + 1, stepId: `s-${i}`, kind: "step" as const, status: "completed" as const, attempt: 1, output: JSON.stringify(stepResult(i)), startedAt: t0, completedAt: t0 + 1 }],
        run: { lostClaims: 0 },
        events: [{ type: "step.completed", data: { step: `s-${i}`, seq: i + 1, attempt: 1, ms: 1 } }],
      };
      const [r] = await store.commit([[unit]]);
      if (!r?.ok) throw new Error("store.commit refused the step");
    },
    async close() {
      await side.end();
      await store.close();
      await db.drop();
    },
  };
}

const only = process.env.VARIANTS ? new Set(process.env.VARIANTS.split(",").map(Number)) : undefined;
const chosen = VARIANTS.filter((_, i) => !only || only.has(i));

try {
  const stats = new Map<string, { us: number[]; ratio: number[]; cpu: number[]; wal: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    const subjects = [await rawSubject(), ...(await Promise.all(chosen.map(statementSubject)))];
    if (process.env.STORE) subjects.push(await storeSubject());
    const acc = new Map(subjects.map((s) => [s.name, { ms: 0, cpu: 0, wal: 0 }]));
    for (let b = 0; b * BLOCK < STEPS; b++) {
      for (let k = 0; k < subjects.length; k++) {
        const s = subjects[(k + b) % subjects.length] as Subject;
        const a = acc.get(s.name) as { ms: number; cpu: number; wal: number };
        const lsn = String((await s.side.query<{ l: string }>("SELECT pg_current_wal_insert_lsn()::text AS l")).rows[0]?.l);
        const c0 = backendCpuUs(s.pid);
        const w0 = performance.now();
        for (let i = b * BLOCK; i < Math.min(STEPS, (b + 1) * BLOCK); i++) await s.step(i);
        a.ms += performance.now() - w0;
        a.cpu += backendCpuUs(s.pid) - c0;
        // The side query's own WAL is nil (a read); others' (the catalog, autovacuum) is noise here.
        a.wal += Number((await s.side.query<{ d: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn) AS d", [lsn])).rows[0]?.d);
      }
    }
    for (const s of subjects) await s.close();
    const raw = ((acc.get("raw")?.ms ?? NaN) * 1000) / STEPS;
    const line: string[] = [];
    for (const s of subjects) {
      const a = acc.get(s.name) as { ms: number; cpu: number; wal: number };
      const us = (a.ms * 1000) / STEPS;
      const e = stats.get(s.name) ?? { us: [], ratio: [], cpu: [], wal: [] };
      e.us.push(us);
      e.ratio.push(us / raw);
      e.cpu.push(a.cpu / STEPS);
      e.wal.push(a.wal / STEPS);
      stats.set(s.name, e);
      line.push(`${s.name.split(" ")[0]} ${fmt(us)}`);
    }
    console.log(`round ${round + 1} (µs/statement): ${line.join(", ")}`);
  }
  console.log("");
  for (const [name, e] of stats) {
    console.log(
      `${name.padEnd(34)} ${fmt(median(e.us)).padStart(5)} µs  ratio ${fmt(median(e.ratio), 2)}x [${e.ratio.map((x) => fmt(x, 2)).join(" ")}]  server CPU ${fmt(median(e.cpu))} µs  WAL ${fmt(median(e.wal))} B`,
    );
  }
} finally {
  await embedded.destroy();
}
