/**
 * Moving a store: export / import between SQLite and Postgres, verified by counts and digests, and
 * runs that carry on where they stopped after the move. Postgres comes from the test setup
 * (test/setup/postgres.ts): each case gets its own database.
 */
import { Readable, Writable } from "node:stream";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, SqliteStore, SteadError, workflow, type Stead, type Store, type Worker } from "../src/index.js";
import { PostgresStore } from "../src/store/postgres/index.js";
import { LATEST_VERSION as PG_LATEST } from "../src/store/postgres/migrations.js";
import { LATEST_VERSION as SQLITE_LATEST } from "../src/store/sqlite/migrations.js";
import { digestStore, exportStore, importStore, NOT_TRANSFERRED, TABLE_SCHEMAS, TRANSFER_SCHEMA_VERSION, verifyStores, type StoreDigest } from "../src/store/transfer/index.js";
import { TableDigester } from "../src/store/transfer/digest.js";
import { TRANSFER_TABLES } from "../src/store/types.js";
import { TABLES, tableSpec } from "../src/store/schema/tables.js";
import { databaseName, dropDatabase, withClient, withDatabase } from "./setup/databases.js";
import { freshDatabase, postgresSetup, type TestDatabase } from "./setup/postgres.js";
import { FAST_WORKER, tempDir } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

// ---------------------------------------------------------------------------------------------
// Definitions. `driftName` is read by a step id: changing it while a run waits makes its replay
// diverge, which holds the run `nondeterminism`.
let driftName = "alpha";

const simple = workflow("xfer-simple", async (ctx, input: { note: string }) => {
  const t = ctx.now();
  const r = ctx.random();
  const echoed = await ctx.step("echo", () => `${input.note} ✓ naïve “quoted” 🚀`);
  return { echoed, t, r };
});
const failing = workflow("xfer-failing", async (ctx) => {
  await ctx.step("ok", () => 1);
  await ctx.step("boom", () => {
    throw new Error("the tool broke\nwith a second line");
  });
});
const gated = workflow("xfer-gated", async (ctx, input: { who: string }) => {
  const fetched = await ctx.step("fetch", () => ({ who: input.who, items: [1, 2, 3] }));
  const d = await ctx.approval("ship", { items: fetched.items.length });
  return ctx.step("finish", () => `${d.approved ? "shipped" : "kept"} for ${fetched.who} by ${d.by ?? "?"}`);
});
const kid = workflow("xfer-kid", async (ctx, n: number) => {
  const d = await ctx.approval("kid-ok");
  return d.approved ? n * 2 : -1;
});
const parent = workflow("xfer-parent", async (ctx, n: number) => {
  const a = await ctx.step("prep", () => n + 1);
  const b = await ctx.child("kid", kid, a);
  return { a, b };
});
const napper = workflow("xfer-nap", async (ctx) => {
  await ctx.sleep("nap", "1h");
  return "rested";
});
const drift = workflow("xfer-drift", async (ctx) => {
  const first = driftName;
  await ctx.step(first, () => first);
  await ctx.approval("go");
  return `done after ${first}`;
});
const ALL = [simple, failing, gated, kid, parent, napper, drift];

const WAIT = { timeoutMs: 20_000 } as const;

/**
 * Runs in every state on `stead`'s store: completed, failed, waiting (approval, child, timer), held
 * (nondeterminism), cancelled, pending, paused, and running under a lease whose worker is gone
 * (with a pause requested).
 */
async function buildScenario(stead: Stead): Promise<void> {
  driftName = "alpha";
  const w = stead.worker({ definitions: ALL, ...FAST_WORKER });
  w.start();
  await stead.runs.start(simple, { note: "first" }, { id: "done-1" });
  await stead.runs.start(failing, null, { id: "fail-1" });
  await stead.runs.start(gated, { who: "ann" }, { id: "gate-1" });
  await stead.runs.start(gated, { who: "bob" }, { id: "gate-2" });
  await stead.runs.start(parent, 20, { id: "parent-1" });
  await stead.runs.start(napper, null, { id: "nap-1" });
  await stead.runs.start(drift, null, { id: "drift-1" });
  await stead.runs.start(drift, null, { id: "drift-2" });
  expect((await stead.runs.waitFor("done-1", WAIT)).status).toBe("completed");
  expect((await stead.runs.waitFor("fail-1", WAIT)).status).toBe("failed");
  for (const id of ["gate-1", "gate-2", "parent-1", "nap-1", "drift-1", "drift-2"]) {
    await stead.runs.waitFor(id, { ...WAIT, until: (r) => r.status === "waiting" });
  }
  const [child] = (await stead.store.listRuns({ parentId: "parent-1" })).runs;
  expect(child).toBeDefined();
  await stead.runs.waitFor(child?.id ?? "", { ...WAIT, until: (r) => r.status === "waiting" });

  driftName = "beta";
  await stead.runs.approve("drift-1", "go", { by: "ann" });
  await stead.runs.waitFor("drift-1", { ...WAIT, until: (r) => r.status === "held" });
  await stead.runs.cancel("gate-2", { reason: "superseded", by: "bob" });
  await w.stop({ graceMs: 1_000 });

  await stead.runs.start(simple, { note: "later" }, { id: "pend-1" });
  await stead.runs.start(simple, { note: "parked" }, { id: "paused-1" });
  expect((await stead.runs.pause("paused-1")).state).toBe("paused");
  // A worker that claimed a run and vanished: its lease ran out a minute ago.
  await stead.runs.start(simple, { note: "orphan" }, { id: "ghost-1" });
  const [claimed] = await stead.store.claim({
    owner: { workerId: "ghost-worker", host: "gone-host", pid: 999_999, start: "then" },
    definitions: [simple.name],
    runIds: ["ghost-1"],
    limit: 1,
    leaseMs: 1_000,
    now: Date.now() - 60_000,
  });
  expect(claimed?.run.status).toBe("running");
  expect((await stead.runs.pause("ghost-1")).state).toBe("pause-requested");
}

/** The dump `exportStore` writes, as text. */
async function dumpText(store: Store): Promise<string> {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  await exportStore(store, out);
  return chunks.join("");
}

const textSource = (text: string) => () => Readable.from([Buffer.from(text, "utf8")]);
const lines = (text: string) => text.split("\n").filter((l) => l !== "");
const rowLines = (text: string) => lines(text).slice(1, -1);

/** Everything the public API shows about every run of a store, in a fixed order. */
async function apiView(stead: Stead) {
  const runs = (await stead.runs.list({ limit: 1000 })).runs.sort((a, b) => (a.id < b.id ? -1 : 1));
  const out: unknown[] = [];
  for (const r of runs) {
    out.push({ run: r, journal: await stead.runs.journal(r.id), waits: await stead.runs.waits(r.id), holds: await stead.holds.list({ runId: r.id, open: false }), events: await stead.runs.events({ runId: r.id }) });
  }
  return { runs: out, holds: await stead.holds.list({ open: false }), events: await stead.runs.events() };
}

function expectRefusal(e: unknown, code: string, message: RegExp): void {
  expect(e).toBeInstanceOf(SteadError);
  expect((e as SteadError).code).toBe(code);
  expect((e as SteadError).message).toMatch(message);
  expect((e as SteadError).fix).toBeTruthy();
}

const rowsIn = (d: StoreDigest) => Object.fromEntries(TRANSFER_TABLES.map((t) => [t, d[t].rows]));

async function expectEmpty(store: Store): Promise<void> {
  const d = await digestStore(store);
  expect(Object.values(rowsIn(d)).every((n) => n === 0)).toBe(true);
}

/** A Postgres database with nothing in it has no tables at all: check() refuses it. */
async function expectUntouched(db: TestDatabase): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const r = await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()");
    expect((r.rows[0] as { n: number }).n).toBe(0);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------

const dir = tempDir("stead-xfer-");
const dbs: TestDatabase[] = [];
const opened: { close(): Promise<void> }[] = [];
let source: Stead;
let dump1: string;

async function pgDatabase(label: string): Promise<TestDatabase> {
  const db = await freshDatabase(label);
  dbs.push(db);
  return db;
}
function pgStore(db: TestDatabase, create = true): PostgresStore {
  const s = new PostgresStore({ connectionString: db.url, create });
  opened.push(s);
  return s;
}
let sqliteCount = 0;
function sqliteStore(): SqliteStore {
  const s = new SqliteStore({ path: join(dir.dir, `target-${++sqliteCount}.db`) });
  opened.push(s);
  return s;
}

beforeAll(async () => {
  source = createStead({ store: join(dir.dir, "source.db") });
  await buildScenario(source);
  dump1 = await dumpText(source.store);
});

afterAll(async () => {
  await source.close().catch(() => undefined);
  for (const s of opened) await s.close().catch(() => undefined);
  for (const db of dbs) await db.drop();
  dir.remove();
});

describe("the transfer column lists", () => {
  it("cover every table of the schema, or name it as left out with a reason", () => {
    const decided = [...TRANSFER_TABLES, ...Object.keys(NOT_TRANSFERRED)].sort();
    expect(decided).toEqual(Object.keys(TABLES).sort());
    for (const [t, why] of Object.entries(NOT_TRANSFERRED)) expect(why.length, t).toBeGreaterThan(20);
  });

  it("describe exactly the columns both dialects' migrations create, at their latest schema version, but a dialect's bookkeeping", async () => {
    expect([SQLITE_LATEST, PG_LATEST]).toEqual([TRANSFER_SCHEMA_VERSION, TRANSFER_SCHEMA_VERSION]);
    const lite = new Map<string, string[]>();
    for (const t of TRANSFER_TABLES) {
      const file = new Database(source.store.location, { readonly: true });
      try {
        const rows = file.prepare(`SELECT name FROM pragma_table_info('${t}') ORDER BY cid`).all() as { name: string }[];
        lite.set(t, rows.map((r) => r.name));
      } finally {
        file.close();
      }
    }
    const db = await pgDatabase("xfer-columns");
    const store = pgStore(db);
    await store.migrate();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      for (const t of TRANSFER_TABLES) {
        const expected = TABLE_SCHEMAS[t].columns.map((c) => c.name);
        // A column one dialect keeps for itself (events.xid in Postgres) is never exported: its values mean nothing elsewhere.
        const own = (dialect: "sqlite" | "postgres") => tableSpec(t).columns.filter((c) => c.only === dialect).map((c) => c.name);
        expect(lite.get(t), `sqlite ${t}`).toEqual([...expected, ...own("sqlite")]);
        const r = await client.query("SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema() ORDER BY ordinal_position", [t]);
        expect(r.rows.map((x: { column_name: string }) => x.column_name), `postgres ${t}`).toEqual([...expected, ...own("postgres")]);
      }
      expect(tableSpec("events").columns.filter((c) => c.only === "postgres").map((c) => c.name)).toEqual(["xid"]);
    } finally {
      await client.end();
    }
  });
});

describe("SQLite → Postgres → SQLite", () => {
  it("the dump counts every row, in a header and a trailer that agree with the store", async () => {
    const all = lines(dump1);
    const header = JSON.parse(all[0] ?? "") as { "stead-export": number; schema: number; source: string; tables: Record<string, number> };
    const trailer = JSON.parse(all[all.length - 1] ?? "") as { tables: StoreDigest };
    expect(header).toMatchObject({ "stead-export": 1, schema: TRANSFER_SCHEMA_VERSION, source: "sqlite" });
    const store = source.store;
    const expected = {
      runs: (await store.listRuns({ limit: 1000 })).runs.length,
      holds: (await store.holds()).length,
      events: (await store.events({ limit: 100_000 })).length,
    };
    // 11 started + 1 child; one open nondeterminism hold.
    expect(expected.runs).toBe(12);
    expect(expected.holds).toBe(1);
    expect(header.tables).toMatchObject(expected);
    expect(rowsIn(trailer.tables)).toEqual(header.tables);
    for (const t of TRANSFER_TABLES) expect(rowLines(dump1).filter((l) => l.startsWith(`{"t":"${t}"`)).length, t).toBe(header.tables[t]);
    // Both flag values and a lease that outlived its worker travel as they are.
    const ghost = rowLines(dump1).map((l) => JSON.parse(l) as { t: string; r: Record<string, unknown> }).find((l) => l.t === "runs" && l.r.id === "ghost-1");
    expect(ghost?.r).toMatchObject({ status: "running", pause_requested: true, fence: 1, lease_owner: "ghost-worker" });
    expect(rowLines(dump1).some((l) => l.includes('"pause_requested":false'))).toBe(true);
  });

  it("imports into Postgres verified; every run reads the same through the API; exported again and imported into SQLite, the dump is identical", async () => {
    const db = await pgDatabase("xfer-roundtrip");
    const target = pgStore(db);
    const imported = await importStore(target, textSource(dump1), { batchRows: 7 });
    expect(imported).toMatchObject({ dialect: "postgres", source: "sqlite", schema: TRANSFER_SCHEMA_VERSION });
    expect(rowsIn(imported.tables)).toEqual((JSON.parse(lines(dump1)[0] ?? "") as { tables: unknown }).tables);

    const cmp = await verifyStores(source.store, target);
    expect(cmp.differences).toEqual([]);
    expect(cmp.equal).toBe(true);

    // The engine's own view (not only the transfer digests) agrees: ids, fences, leases, flags, payloads.
    const moved = createStead({ store: target });
    expect(await apiView(moved)).toEqual(await apiView(source));

    const dump2 = await dumpText(target);
    expect(JSON.parse(lines(dump2)[0] ?? "")).toMatchObject({ source: "postgres" });
    // Postgres may page text keys in its own collation order: the same rows, maybe not the same order.
    expect([...rowLines(dump2)].sort()).toEqual([...rowLines(dump1)].sort());
    expect(lines(dump2).at(-1)).toBe(lines(dump1).at(-1));

    const back = sqliteStore();
    // A plain stream this time: it is copied to a temp file and read twice.
    await importStore(back, Readable.from([dump2]));
    expect(await dumpText(back)).toBe(dump1);
    expect((await verifyStores(back, source.store)).equal).toBe(true);
  });

  it("a change to one row is seen by verifyStores", async () => {
    const copy = sqliteStore();
    await importStore(copy, textSource(dump1));
    expect((await verifyStores(source.store, copy)).equal).toBe(true);
    const file = new Database(copy.location);
    try {
      expect(file.prepare(`UPDATE steps SET output = '"tampered"' WHERE run_id = 'done-1' AND step_id = 'echo'`).run().changes).toBe(1);
    } finally {
      file.close();
    }
    const cmp = await verifyStores(source.store, copy);
    expect(cmp.equal).toBe(false);
    expect(cmp.differences).toEqual([expect.stringMatching(/^steps: the \d+ rows differ/)]);
    expect(cmp.tables.steps.equal).toBe(false);
    expect(cmp.tables.runs.equal).toBe(true);
  });
});

describe("a Postgres database that orders text differently", () => {
  it("pages text keys in its own collation order, yet verifies equal and round-trips to the identical dump", async (ctx) => {
    // An ICU collation sorts "a-1" < "a_1" < "a1" and "b-1" < "B-2" < "Z"; SQLite compares bytes ("B-2" < "Z" < "a-1").
    const { adminUrl, databasePrefix } = postgresSetup();
    const name = databaseName(databasePrefix, "xfer-icu");
    try {
      await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`));
    } catch (e) {
      ctx.skip(`this Postgres server cannot create an ICU-collated database (${e instanceof Error ? e.message : String(e)})`);
    }
    dbs.push({ name, url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) });
    const db = dbs[dbs.length - 1] as TestDatabase;

    const lite = sqliteStore();
    const stead = createStead({ store: lite });
    for (const id of ["b-1", "B-2", "a_1", "a-1", "a1", "Z", "a:1", "a-1-x", "a_1:x"]) await stead.runs.start(simple, { note: id }, { id });
    const liteDump = await dumpText(lite);

    const target = pgStore(db);
    await importStore(target, textSource(liteDump));
    expect((await verifyStores(lite, target)).equal).toBe(true);

    // Pages of 2 rows: keyset paging must follow the collation the database sorts by.
    const chunks: string[] = [];
    await exportStore(target, new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) }), { pageRows: 2 });
    const pgDump = chunks.join("");
    const ids = (dump: string) => rowLines(dump).map((l) => JSON.parse(l) as { t: string; r: { id?: string } }).filter((l) => l.t === "runs").map((l) => l.r.id);
    expect(ids(pgDump)).not.toEqual(ids(liteDump));
    expect([...ids(pgDump)].sort()).toEqual([...ids(liteDump)].sort());
    expect(lines(pgDump).at(-1)).toBe(lines(liteDump).at(-1));

    const back = sqliteStore();
    await importStore(back, textSource(pgDump));
    expect(await dumpText(back)).toBe(liteDump);
  });
});

describe("moved runs carry on in Postgres", () => {
  let worker: Worker | undefined;
  afterAll(async () => {
    await worker?.stop({ graceMs: 1_000 });
  });

  it("approvals, a child, a pending run, a paused run and a run whose worker vanished complete; new holds and events get fresh numbers", async () => {
    const db = await pgDatabase("xfer-resume");
    const target = pgStore(db);
    await importStore(target, textSource(dump1));
    const before = await digestStore(target);
    const maxHold = Math.max(...(await target.holds()).map((h) => h.id));
    const maxEvent = Math.max(...(await target.events({ limit: 100_000 })).map((e) => e.seq));

    const stead = createStead({ store: target });
    const errors: unknown[] = [];
    worker = stead.worker({ definitions: ALL, ...FAST_WORKER });
    worker.on("error", (e) => errors.push(e));
    worker.start();

    await stead.runs.approve("gate-1", "ship", { by: "carol" });
    const [child] = (await target.listRuns({ parentId: "parent-1" })).runs;
    await stead.runs.approve(child?.id ?? "", "kid-ok", { by: "carol" });
    expect((await stead.runs.waitFor("gate-1", WAIT)).output).toBe("shipped for ann by carol");
    expect((await stead.runs.waitFor("parent-1", WAIT)).output).toEqual({ a: 21, b: 42 });
    expect((await stead.runs.waitFor("pend-1", WAIT)).status).toBe("completed");

    // The vanished worker's lease (taken under SQLite's clock) has expired under Postgres's: the run is
    // claimed again, counted as a lost claim, and completes.
    const ghost = await stead.runs.waitFor("ghost-1", WAIT);
    expect(ghost.status).toBe("completed");
    expect(ghost.fence).toBe(2);
    expect((await stead.runs.events({ runId: "ghost-1" })).filter((e) => e.type === "run.claimed").map((e) => e.data.previousStatus)).toEqual(["pending", "running"]);
    await stead.runs.resume("paused-1");
    expect((await stead.runs.waitFor("paused-1", WAIT)).status).toBe("completed");

    // drift-2 recorded step "alpha"; its replay now asks for "beta": a new hold, numbered past the imported ones.
    driftName = "beta";
    await stead.runs.approve("drift-2", "go", { by: "carol" });
    await stead.runs.waitFor("drift-2", { ...WAIT, until: (r) => r.status === "held" });
    const [hold] = await stead.holds.list({ runId: "drift-2" });
    expect(hold?.kind).toBe("nondeterminism");
    expect(Number(hold?.id)).toBeGreaterThan(maxHold);
    const newEvents = await stead.runs.events({ afterSeq: maxEvent });
    expect(newEvents.length).toBeGreaterThan(0);
    expect(newEvents.map((e) => e.seq)).toEqual([...newEvents.map((e) => e.seq)].sort((a, b) => a - b));

    // Runs left alone are untouched: the completed, failed, cancelled and timer-waiting ones.
    for (const id of ["done-1", "fail-1", "gate-2", "nap-1", "drift-1"]) expect(await stead.runs.get(id)).toEqual(await source.runs.get(id));
    expect(before.runs.rows).toBe(12);
    expect(errors).toEqual([]);
  });
});

/** `dump` as a Stead of schema 1 (before sessions) would have written it: later columns gone, digests to match. */
function asSchema1(dump: string): string {
  return asSchema(dump, 1, ["runs", "steps", "waits", "holds", "events"]);
}

/** `dump` as a Stead of schema `schema`, whose tables were `tables`, would have written it. */
function asSchema(dump: string, schema: number, tables: readonly (typeof TRANSFER_TABLES)[number][]): string {
  const all = lines(dump);
  const header = JSON.parse(all[0] ?? "") as { schema: number; tables: Record<string, number> };
  const trailer = JSON.parse(all[all.length - 1] ?? "") as { tables: Record<string, unknown> };
  const digesters = Object.fromEntries(tables.map((t) => [t, new TableDigester()])) as Record<(typeof TRANSFER_TABLES)[number], TableDigester>;
  const body = rowLines(dump).map((l) => {
    const { t, r } = JSON.parse(l) as { t: (typeof TRANSFER_TABLES)[number]; r: Record<string, unknown> };
    expect(tables).toContain(t);
    const cols = TABLE_SCHEMAS[t].columns.filter((c: { since?: number }) => (c.since ?? 1) <= schema).map((c) => c.name);
    const row = Object.fromEntries(cols.map((c) => [c, r[c]]));
    digesters[t].add(JSON.stringify(row));
    return JSON.stringify({ t, r: row });
  });
  header.schema = schema;
  header.tables = Object.fromEntries(tables.map((t) => [t, header.tables[t] ?? 0]));
  trailer.tables = Object.fromEntries(tables.map((t) => [t, digesters[t].digest()]));
  return [JSON.stringify(header), ...body, JSON.stringify(trailer)].join("\n") + "\n";
}

describe("sessions, and dumps of an older schema", () => {
  it("session ids and turns travel SQLite → Postgres → SQLite; in Postgres the claim rule holds and the numbering goes on", async () => {
    const lite = sqliteStore();
    await lite.migrate();
    const run = (id: string, sessionId?: string) => ({ id, definition: simple.name, module: null, fingerprint: null, input: JSON.stringify({ note: id }), createdAt: 1_000, ...(sessionId ? { sessionId } : {}) });
    for (const [id, sid] of [["a1", "A"], ["b1", "B"], ["a2", "A"], ["plain"], ["a3", "A"]] as const) await lite.createRun(run(id, sid), [{ type: "run.created" }]);
    await lite.commit([[{ runId: "a1", run: { status: "completed", output: '"x"' } }], [{ runId: "a2", run: { status: "failed", error: '{"message":"boom"}' } }]]);
    const liteDump = await dumpText(lite);
    const runRows = rowLines(liteDump).map((l) => JSON.parse(l) as { t: string; r: Record<string, unknown> }).filter((l) => l.t === "runs");
    expect(runRows.map((l) => [l.r.id, l.r.session_id, l.r.turn])).toEqual([["a1", "A", 1], ["a2", "A", 2], ["a3", "A", 3], ["b1", "B", 1], ["plain", null, null]]);

    const target = pgStore(await pgDatabase("xfer-sessions"));
    await importStore(target, textSource(liteDump));
    expect((await verifyStores(lite, target)).differences).toEqual([]);
    expect(await target.listSessions()).toEqual(await lite.listSessions());
    const back = sqliteStore();
    await importStore(back, textSource(await dumpText(target)));
    expect(await dumpText(back)).toBe(liteDump);

    expect((await target.createRun(run("a4", "A"), [])).turn).toBe(4);
    const claimed = await target.claim({ owner: { workerId: "w", host: "h", pid: 1, start: "s" }, definitions: [simple.name], limit: 10, leaseMs: 60_000, now: Date.now() });
    expect(claimed.map((c) => c.run.id).sort()).toEqual(["a3", "b1", "plain"]);
  });

  it("a dump of schema 1, from before sessions, imports into either dialect with no session on its runs", async () => {
    const v1 = asSchema1(dump1);
    expect(JSON.parse(lines(v1)[0] ?? "")).toMatchObject({ schema: 1 });
    expect(v1).not.toContain('"session_id"');
    for (const target of [sqliteStore(), pgStore(await pgDatabase("xfer-v1"))]) {
      const imported = await importStore(target, textSource(v1));
      expect(imported).toMatchObject({ source: "sqlite", schema: 1 });
      // Every row, in every column schema 1 had; the columns added since are empty (null).
      expect(rowLines(asSchema1(await dumpText(target)))).toEqual(rowLines(v1));
      expect(await target.getRun("done-1")).toMatchObject({ sessionId: null, turn: null, outputRefs: null });
    }
  });

  it("step checkpoints travel SQLite → Postgres → SQLite; a dump of schema 3, from before them, imports with none", async () => {
    const lite = sqliteStore();
    await lite.migrate();
    const checkpoint = JSON.stringify({ commit: "9f3c2e1", note: "naïve “quoted” 🚀" });
    const st = (seq: number, extra: { checkpoint?: string } = {}) => ({ seq, stepId: `s${seq}`, kind: "tool" as const, status: "completed" as const, attempt: 1, output: "null", startedAt: 1, completedAt: 2, ...extra });
    await lite.createRun({ id: "cp-1", definition: simple.name, module: null, fingerprint: null, input: "null", createdAt: 1_000, journal: [st(0, { checkpoint }), st(1)] }, []);
    const liteDump = await dumpText(lite);
    const steps = rowLines(liteDump).map((l) => JSON.parse(l) as { t: string; r: Record<string, unknown> }).filter((l) => l.t === "steps");
    expect(steps.map((l) => [l.r.seq, l.r.checkpoint])).toEqual([[0, checkpoint], [1, null]]);

    const target = pgStore(await pgDatabase("xfer-checkpoint"));
    await importStore(target, textSource(liteDump));
    expect((await verifyStores(lite, target)).differences).toEqual([]);
    expect((await target.journal("cp-1")).map((s) => s.checkpoint)).toEqual([checkpoint, null]);
    const back = sqliteStore();
    await importStore(back, textSource(await dumpText(target)));
    expect(await dumpText(back)).toBe(liteDump);

    const v3 = asSchema(liteDump, 3, TRANSFER_TABLES);
    expect(v3).not.toContain('"checkpoint"');
    for (const old of [sqliteStore(), pgStore(await pgDatabase("xfer-v3"))]) {
      expect(await importStore(old, textSource(v3))).toMatchObject({ source: "sqlite", schema: 3 });
      const journal = await old.journal("cp-1");
      expect(journal.map((s) => s.checkpoint)).toEqual([null, null]);
      expect(journal.map((s) => ({ ...s, checkpoint: "x" }))).toEqual((await lite.journal("cp-1")).map((s) => ({ ...s, checkpoint: "x" })));
    }
  });
});

describe("refusals", () => {
  it("importing into a store that holds runs changes nothing", async () => {
    const target = sqliteStore();
    const other = createStead({ store: target });
    await other.runs.start(simple, { note: "mine" }, { id: "mine-1" });
    const before = await digestStore(target);
    const e = await caught(() => importStore(target, textSource(dump1)));
    expectRefusal(e, "STEAD_INVALID_STATE", /already holds runs \(run mine-1/);
    expect((e as SteadError).fix).toMatch(/empty store/);
    expect(await digestStore(target)).toEqual(before);
  });

  const cases: [string, (dump: string) => string, RegExp][] = [
    ["a dump without its trailer", (d) => `${lines(d).slice(0, -1).join("\n")}\n`, /without its trailer line: it is truncated/],
    ["a dump cut in the middle of a line", (d) => d.slice(0, d.indexOf("\n", d.length / 2) - 5), /ends in the middle of line \d+: it is truncated/],
    ["a dump with a row missing", (d) => lines(d).filter((_l, i) => i !== 3).join("\n") + "\n", /is corrupted: runs: 12 rows in its trailer, 11 in its rows/],
    ["a dump with one value changed", (d) => d.replace('"first ✓', '"firsT ✓'), /is corrupted: runs: the 12 rows differ/],
    ["a row value of the wrong kind", (d) => d.replace('"fence":1,', '"fence":"1",'), /line \d+: runs row has "1" in fence, which holds integers/],
    ["a newer dump version", (d) => d.replace('{"stead-export":1,', '{"stead-export":3,'), /is a version 3 export, newer than this Stead reads \(2\)/],
    ["an encrypted dump version without its keys", (d) => d.replace('{"stead-export":1,', '{"stead-export":2,'), /is a version 2 \(encrypted\) export without its keys/],
    ["a plain dump version with keys", (d) => d.replace('{"stead-export":1,', '{"stead-export":1,"keys":[],'), /is a version 1 \(plain\) export, yet its header carries keys/],
    ["a row lacking a column of its schema", (d) => d.replace(',"turn":null', ""), /line \d+: runs row lacks column turn/],
    ["an older schema's row with a column added since", (d) => d.replace(`"schema":${TRANSFER_SCHEMA_VERSION},`, '"schema":1,'), /line \d+: runs row has a column this schema does not know: session_id/],
    ["a newer schema", (d) => d.replace(`"schema":${TRANSFER_SCHEMA_VERSION},`, `"schema":${TRANSFER_SCHEMA_VERSION + 1},`), /holds a store of schema version \d+, newer than this Stead's/],
    ["a file that is not a dump", () => "id,name\n1,x\n", /is not a Stead export/],
    ["an empty file", () => "", /is empty, not a Stead export/],
  ];

  it.each(cases)("%s is refused before anything is written (Postgres target)", async (_name, spoil, message) => {
    const spoiled = spoil(dump1);
    expect(spoiled).not.toBe(dump1);
    const db = await pgDatabase("xfer-refuse");
    const target = pgStore(db);
    const e = await caught(() => importStore(target, textSource(spoiled), { name: "spoiled.dump" }));
    expectRefusal(e, "STEAD_BAD_DUMP", message);
    expect((e as SteadError).message).toContain("spoiled.dump");
    await expectUntouched(db);
  });

  it("a corrupted dump read from a stream leaves a SQLite target empty too", async () => {
    const target = sqliteStore();
    await target.migrate();
    const e = await caught(() => importStore(target, Readable.from([dump1.replace('"ann"', '"anne"')])));
    expectRefusal(e, "STEAD_BAD_DUMP", /is corrupted/);
    await expectEmpty(target);
  });

  it("a whole dump that the store still rejects part way (a duplicate key) fails naming the partial import and the way out", async () => {
    // Hand-made: a steps row twice, with header and trailer recomputed so the dump itself verifies.
    const all = lines(dump1);
    const header = JSON.parse(all[0] ?? "") as { tables: Record<string, number> };
    const trailer = JSON.parse(all[all.length - 1] ?? "") as { tables: StoreDigest };
    const steps = rowLines(dump1).filter((l) => l.startsWith('{"t":"steps"'));
    const dup = steps[steps.length - 1] ?? "";
    const d = new TableDigester();
    for (const l of [...steps, dup]) d.add(JSON.stringify((JSON.parse(l) as { r: unknown }).r));
    header.tables.steps = (header.tables.steps ?? 0) + 1;
    trailer.tables.steps = d.digest();
    const body = rowLines(dump1).flatMap((l) => (l === dup ? [l, l] : [l]));
    const spoiled = [JSON.stringify(header), ...body, JSON.stringify(trailer)].join("\n") + "\n";

    const target = sqliteStore();
    const e = await caught(() => importStore(target, textSource(spoiled), { batchRows: 5 }));
    expectRefusal(e, "STEAD_INVALID_STATE", /^the import into .* stopped after \d+ rows: .*UNIQUE constraint failed: steps\.run_id, steps\.seq/);
    expect((e as SteadError).fix).toMatch(/holds part of the dump: remove the target/);
  });

  it("export refuses while a worker holds a live lease, unless told to go ahead", async () => {
    const store = sqliteStore();
    const stead = createStead({ store });
    await stead.runs.start(simple, { note: "busy" }, { id: "busy-1" });
    await store.claim({ owner: { workerId: "live-worker", host: "here", pid: process.pid, start: "now" }, definitions: [simple.name], limit: 1, leaseMs: 60_000, now: Date.now() });
    const out = new Writable({ write: (_c, _e, cb) => cb() });
    const e = await caught(() => exportStore(store, out));
    expectRefusal(e, "STEAD_INVALID_STATE", /running under a live lease \(run busy-1, worker live-worker on here\)/);
    expect((e as SteadError).runId).toBe("busy-1");
    const s = await exportStore(store, new Writable({ write: (_c, _e, cb) => cb() }), { allowLive: true });
    expect(s.tables.runs.rows).toBe(1);
  });

  it("an export during which the store changes fails and writes no trailer", async () => {
    const store = sqliteStore();
    const stead = createStead({ store });
    await stead.runs.start(simple, { note: "a" }, { id: "a-1" });
    let text = "";
    let wrote = false;
    // A high-water mark of one byte makes the export wait for each chunk's callback.
    const out = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _enc, cb) {
        text += chunk.toString();
        if (wrote) return cb();
        wrote = true;
        // Another writer, between the export's two reads: the export goes on once it has committed.
        stead.runs.start(simple, { note: "b" }, { id: "b-1" }).then(() => cb(), cb);
      },
    });
    const e = await caught(() => exportStore(store, out));
    expectRefusal(e, "STEAD_INVALID_STATE", /changed during the export \(runs: 1 rows in the first read, 2 in the second/);
    expect(text).not.toContain("stead-export-end");
    const e2 = await caught(() => importStore(sqliteStore(), textSource(text)));
    expectRefusal(e2, "STEAD_BAD_DUMP", /truncated/);
  });
});
