/**
 * Postgres's event stream under real concurrency: eight connections commit events for many runs in
 * small transactions that sleep while open (some roll back), two of them through the store's own
 * commit; an unrelated transaction holding an id, and a writer that inserted its events first but
 * is slow to commit, stay open meanwhile. Followers poll all along. Afterwards each follower's
 * sequence is checked against the table: every committed event once, none of an aborted
 * transaction, each run's in number order, and a transaction committed before another began
 * delivered before it; and, from what it had received before the long transactions ended, that it
 * kept delivering while they were open.
 *
 * The same checks run on two followers that must fail them, so the checks can fail: one that reads
 * `seq > last` (the old read) skips the slow writer's events, and one that waits for the snapshot
 * horizon (every event of a transaction below xmin) receives nothing while the long transaction is open.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { MIGRATIONS } from "../src/store/postgres/migrations.js";
import type { EventRow, EventStreamFilter, Store } from "../src/store/types.js";
import { newRun } from "../src/store/conformance/fixtures.js";
import { waitUntil } from "./helpers/waiting.js";
import { freshDatabase, useFreshDatabases, type TestDatabase } from "./setup/postgres.js";

const RUNS = Array.from({ length: 24 }, (_, i) => `r${String(i).padStart(2, "0")}`);
/** Locked by the slow writer for the whole time: nobody else writes it. */
const SLOW_RUN = "r00";
const WRITABLE = RUNS.filter((r) => r !== SLOW_RUN);
const RAW_WRITERS = 6;
const STORE_WRITERS = 2;
const TRANSACTIONS = 30;
const LOCK_TIMEOUT_MS = 20_000;
/** Bound on the writers together (a few seconds on an idle machine); past it, what each connection waits on is reported. */
const WRITERS_TIMEOUT_MS = 90_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

interface Tx {
  /** When BEGIN was sent, and when COMMIT (or the store's commit) returned; performance.now(). */
  began: number;
  ended: number;
  committed: boolean;
  tags: string[];
}

interface Follower {
  name: string;
  wants: (runId: string) => boolean;
  poll: () => Promise<EventRow[]>;
}

interface Followed {
  follower: Follower;
  got: { event: EventRow; longOpen: boolean }[];
  emptyPollsSince: (t: number) => number;
}

function streamFollower(store: Store, name: string, filter: Omit<EventStreamFilter, "limit">, limit: number): Follower {
  let position: string | null = null;
  const ids = filter.runIds ?? (filter.runId !== undefined ? [filter.runId] : undefined);
  return {
    name,
    wants: (r) => ids === undefined || ids.includes(r),
    poll: async () => {
      const page = await store.eventsAfter(position, { ...filter, limit });
      position = page.position;
      return page.events;
    },
  };
}

/** The old read: `seq > last`. */
function seqFollower(store: Store, name: string, runId?: string): Follower {
  let last = 0;
  return {
    name,
    wants: (r) => runId === undefined || r === runId,
    poll: async () => {
      const events = await store.events({ ...(runId === undefined ? {} : { runId }), afterSeq: last, limit: 1000 });
      last = events[events.length - 1]?.seq ?? last;
      return events;
    },
  };
}

/** Gap-free but blocked: only events of transactions below the snapshot's xmin (all of which are complete). */
function horizonFollower(client: pg.Client): Follower & { passed: (xid: number) => boolean } {
  let below = 0;
  return {
    name: "horizon",
    // Whether its horizon is past `xid`. The horizon is the cluster's: a transaction of another
    // test's database holds it back too, so its reads go empty long before it has caught up.
    passed: (xid) => below > xid,
    wants: () => true,
    poll: async () => {
      const rows = (
        await client.query<{ h: string; seq: string | null; run_id: string; type: string; at: string; data: string }>(
          `WITH h AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS h)
           SELECT h.h, e.* FROM h LEFT JOIN events e ON e.xid >= $1 AND e.xid < h.h ORDER BY e.seq`,
          [below],
        )
      ).rows;
      below = Number(rows[0]?.h ?? below);
      return rows.filter((r) => r.seq !== null).map((r) => ({ seq: Number(r.seq), runId: r.run_id, type: r.type, at: Number(r.at), data: r.data }));
    },
  };
}

function follow(f: Follower, isOpen: () => boolean, stopped: () => boolean): { followed: Followed; done: Promise<void> } {
  const got: Followed["got"] = [];
  const empties: number[] = [];
  let failed: unknown;
  const done = (async () => {
    while (!stopped()) {
      const began = performance.now();
      const events = await f.poll().catch((e: unknown) => {
        failed = e;
        throw e;
      });
      const open = isOpen();
      for (const event of events) got.push({ event, longOpen: open });
      if (events.length === 0) {
        empties.push(began);
        await sleep(1 + Math.random() * 3);
      }
    }
  })();
  // Handled here so a failed poll is reported by whoever waits on the follower, not as unhandled.
  done.catch(() => undefined);
  const emptyPollsSince = (t: number) => {
    if (failed !== undefined) throw new Error(`follower ${f.name} failed`, { cause: failed });
    return empties.filter((x) => x >= t).length;
  };
  return { followed: { follower: f, got, emptyPollsSince }, done };
}

async function rawWriter(url: string, w: number, txs: Tx[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  // A dropped connection is reported by the query it fails, not as an uncaught 'error' event.
  c.on("error", () => undefined);
  await c.connect();
  // A lock wait that never ends fails the writer, naming it, instead of hanging the set-up.
  await c.query(`SET lock_timeout = '${LOCK_TIMEOUT_MS}ms'`);
  try {
    for (let t = 0; t < TRANSACTIONS; t++) {
      const tx: Tx = { began: performance.now(), ended: 0, committed: false, tags: [] };
      await c.query("BEGIN");
      // As every Stead writer does: the run's row first, then its events. A second run is locked
      // in id order, so two writers never deadlock.
      const runs = [...new Set([pick(WRITABLE), ...(Math.random() < 0.3 ? [pick(WRITABLE)] : [])])].sort();
      for (const [k, run] of runs.entries()) {
        await c.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [run]);
        for (let i = 0; i < 1 + Math.floor(Math.random() * 3); i++) {
          const tag = `w${w}.${t}.${k}.${i}`;
          await c.query("INSERT INTO events (run_id, type, at, data) VALUES ($1, 'written', 0, $2)", [run, JSON.stringify({ tag })]);
          tx.tags.push(tag);
        }
        await sleep(Math.random() * 12);
      }
      tx.committed = Math.random() >= 0.1;
      await c.query(tx.committed ? "COMMIT" : "ROLLBACK");
      tx.ended = performance.now();
      txs.push(tx);
    }
  } finally {
    await c.end();
  }
}

async function storeWriter(store: Store, w: number, txs: Tx[]): Promise<void> {
  for (let t = 0; t < TRANSACTIONS; t++) {
    const tx: Tx = { began: performance.now(), ended: 0, committed: true, tags: [] };
    const units = [...new Set([pick(WRITABLE), pick(WRITABLE)])].map((runId, k) => {
      const tags = [`s${w}.${t}.${k}.0`, `s${w}.${t}.${k}.1`];
      tx.tags.push(...tags);
      return [{ runId, events: tags.map((tag) => ({ type: "committed", data: { tag } })) }];
    });
    const results = await store.commit(units);
    expect(results.every((r) => r.ok)).toBe(true);
    tx.ended = performance.now();
    txs.push(tx);
    await sleep(Math.random() * 4);
  }
}

/** What every other connection to this database is doing: a hung set-up's explanation. */
async function activity(c: pg.Client): Promise<string> {
  const rows = (
    await c.query<{ pid: number; state: string | null; wait: string | null; xact_s: string | null; query: string }>(
      `SELECT pid, state, wait_event_type || ':' || wait_event AS wait, extract(epoch FROM now() - xact_start)::int::text AS xact_s, left(query, 120) AS query
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY pid`,
    )
  ).rows;
  return rows.map((r) => `pid ${r.pid} ${r.state ?? "?"} wait=${r.wait ?? "-"} xact=${r.xact_s ?? "-"}s: ${r.query}`).join("\n");
}

async function withinOrExplain<T>(work: Promise<T>, ms: number, explain: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void explain().then(
        (why) => reject(new Error(`the writers did not finish within ${ms} ms; connections:\n${why}`)),
        (e: unknown) => reject(new Error(`the writers did not finish within ${ms} ms (and pg_stat_activity could not be read: ${String(e)})`)),
      );
    }, ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface TableRow {
  seq: number;
  runId: string;
  tag: string | undefined;
}

interface Verdict {
  missing: number[];
  /** Delivered, but not a committed row of the table (an aborted transaction's, or made up). */
  extra: number[];
  duplicates: number[];
  /** A run's events delivered out of number order. */
  runOrder: string[];
  /** A transaction committed before another began, delivered after it. */
  commitOrder: string[];
  /** Events committed by the writers, wanted, and not received before the long transactions ended. */
  notWhileOpen: number;
  whileOpen: number;
}

function verdict(f: Followed, table: readonly TableRow[], txs: readonly Tx[], writerTags: ReadonlySet<string>): Verdict {
  const expected = table.filter((r) => f.follower.wants(r.runId));
  const delivered = f.got.map((g) => g.event.seq);
  const inTable = new Set(table.map((r) => r.seq));
  const seen = new Set<number>();
  const duplicates: number[] = [];
  for (const s of delivered) {
    if (seen.has(s)) duplicates.push(s);
    seen.add(s);
  }
  const runOrder: string[] = [];
  const lastOfRun = new Map<string, number>();
  for (const { event } of f.got) {
    const prev = lastOfRun.get(event.runId);
    if (prev !== undefined && prev > event.seq) runOrder.push(`${event.runId}: ${event.seq} after ${prev}`);
    lastOfRun.set(event.runId, event.seq);
  }
  // Where each delivered tag came: a transaction's first and last place in the sequence.
  const place = new Map<string, number>();
  f.got.forEach((g, i) => {
    const tag = (JSON.parse(g.event.data) as { tag?: string }).tag;
    if (tag !== undefined) place.set(tag, i);
  });
  const spans = txs
    .filter((t) => t.committed)
    .map((t) => {
      const at = t.tags.map((tag) => place.get(tag)).filter((x): x is number => x !== undefined);
      return { t, first: Math.min(...at), last: Math.max(...at), any: at.length > 0 };
    })
    .filter((s) => s.any);
  const commitOrder: string[] = [];
  for (const a of spans) for (const b of spans) if (a.t.ended < b.t.began && a.last > b.first) commitOrder.push(`${a.t.tags[0] ?? "?"} (committed first) after ${b.t.tags[0] ?? "?"}`);
  const openSeqs = new Set(f.got.filter((g) => g.longOpen).map((g) => g.event.seq));
  const byWriters = expected.filter((r) => r.tag !== undefined && writerTags.has(r.tag));
  return {
    missing: expected.map((r) => r.seq).filter((s) => !seen.has(s)),
    extra: [...seen].filter((s) => !inTable.has(s) || !expected.some((r) => r.seq === s)),
    duplicates,
    runOrder,
    commitOrder: commitOrder.slice(0, 5),
    notWhileOpen: byWriters.filter((r) => !openSeqs.has(r.seq)).length,
    whileOpen: byWriters.filter((r) => openSeqs.has(r.seq)).length,
  };
}

describe("Postgres event stream with concurrent writers", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  const verdicts = new Map<string, Verdict>();
  let slowSeqs: number[] = [];
  // Followers poll until told to stop. A set-up that fails or times out part-way (a hook timeout
  // does not stop the hook's code) must still stop them and end its connections before the store
  // closes, or their next poll rejects after the file has ended.
  let stopped = false;
  let following: Promise<void>[] = [];
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    db = await freshDatabase("event-stream");
    store = new PostgresStore({ connectionString: db.url, poolSize: 12, idleInTransactionTimeoutMs: 120_000 });
    await store.migrate();
    for (const r of RUNS) await store.createRun(newRun(r), [{ type: "run.created" }]);

    const client = async () => {
      const c = new pg.Client({ connectionString: db.url });
      c.on("error", () => undefined);
      await c.connect();
      clients.push(c);
      return c;
    };
    try {
      // Open before anything is followed: an unrelated transaction holding an id, and a writer
      // whose events are numbered before every writer's but that commits after them all.
      const idle = await client();
      await idle.query("BEGIN; SELECT pg_current_xact_id()");
      const slow = await client();
      await slow.query("BEGIN");
      await slow.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [SLOW_RUN]);
      slowSeqs = (await slow.query<{ seq: string }>("INSERT INTO events (run_id, type, at, data) VALUES ($1, 'slow', 0, '{}'), ($1, 'slow', 0, '{}') RETURNING seq", [SLOW_RUN])).rows.map((r) => Number(r.seq));

      let longOpen = true;
      const horizon = horizonFollower(await client());
      const followers = [
        streamFollower(store, "stream, pages of 7", {}, 7),
        streamFollower(store, "stream, pages of 1000", {}, 1000),
        streamFollower(store, "stream of one run", { runId: "r05" }, 3),
        streamFollower(store, "stream of eight runs", { runIds: RUNS.slice(0, 8) }, 5),
        seqFollower(store, "seq > last"),
        seqFollower(store, "seq > last, one run", "r05"),
        horizon,
      ].map((f) => follow(f, () => longOpen, () => stopped));
      following = followers.map((f) => f.done);
      const quiet = async (since: number) => {
        for (const f of followers) await waitUntil(`${f.followed.follower.name} to read nothing new`, () => f.followed.emptyPollsSince(since) >= 2, { timeoutMs: 30_000 });
      };

      const txs: Tx[] = [];
      await withinOrExplain(
        Promise.all([
          ...Array.from({ length: RAW_WRITERS }, (_, w) => rawWriter(db.url, w, txs)),
          ...Array.from({ length: STORE_WRITERS }, (_, w) => storeWriter(store, w, txs)),
        ]),
        WRITERS_TIMEOUT_MS,
        () => activity(idle),
      );
      const writerTags = new Set(txs.filter((t) => t.committed).flatMap((t) => t.tags));
      await quiet(performance.now());

      // Cleared before the transactions end, not after: a poll whose reply arrives after COMMIT
      // was sent may have read past them, and must not count as received while they were open.
      longOpen = false;
      await slow.query("COMMIT");
      await idle.query("ROLLBACK");
      await quiet(performance.now());
      const lastXid = Number((await idle.query<{ x: string | null }>("SELECT max(xid)::text AS x FROM events")).rows[0]?.x ?? 0);
      await waitUntil("the horizon follower to pass the last write", () => horizon.passed(lastXid), { timeoutMs: 60_000 });
      stopped = true;
      await Promise.all(followers.map((f) => f.done));

      const table = (await idle.query<{ seq: string; run_id: string; data: string }>("SELECT seq, run_id, data FROM events ORDER BY seq")).rows.map((r) => ({
        seq: Number(r.seq),
        runId: r.run_id,
        tag: (JSON.parse(r.data) as { tag?: string }).tag,
      }));
      expect(table.length).toBeGreaterThan(RUNS.length + TRANSACTIONS * STORE_WRITERS * 2);
      for (const f of followers) verdicts.set(f.followed.follower.name, verdict(f.followed, table, txs, writerTags));
    } finally {
      stopped = true;
      await Promise.allSettled(following);
    }
  }, 180_000);

  afterAll(async () => {
    stopped = true;
    await Promise.allSettled(following);
    for (const c of clients) await c.end().catch(() => undefined);
    await store?.close();
    await db?.drop();
  });

  const clean = (v: Verdict | undefined) => v && { missing: v.missing, extra: v.extra, duplicates: v.duplicates, runOrder: v.runOrder, commitOrder: v.commitOrder, notWhileOpen: v.notWhileOpen };

  it.each(["stream, pages of 7", "stream, pages of 1000", "stream of one run", "stream of eight runs"])(
    "%s: every committed event once, in commit order, and kept delivering while a transaction stayed open",
    (name) => {
      const v = verdicts.get(name);
      expect(clean(v)).toEqual({ missing: [], extra: [], duplicates: [], runOrder: [], commitOrder: [], notWhileOpen: 0 });
    expect(v?.whileOpen).toBeGreaterThan(0);
    },
  );

  it("the checks catch a follower of `seq > last`: it skips the slow writer's events", () => {
    const v = verdicts.get("seq > last");
    expect(slowSeqs).toHaveLength(2);
    for (const s of slowSeqs) expect(v?.missing).toContain(s);
  });

  it("one run's `seq > last` is gap-free when every writer holds the run's row until it commits", () => {
    expect(clean(verdicts.get("seq > last, one run"))).toEqual({ missing: [], extra: [], duplicates: [], runOrder: [], commitOrder: [], notWhileOpen: 0 });
  });

  it("the checks catch a follower that waits for the snapshot horizon: nothing while the long transaction was open", () => {
    const v = verdicts.get("horizon");
    expect(v?.whileOpen).toBe(0);
    expect(v?.notWhileOpen).toBeGreaterThan(0);
    expect(v?.missing).toEqual([]);
  });
});

describe("Postgres event stream positions", () => {
  const fresh = useFreshDatabases();
  const opened: PostgresStore[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });
  const open = async (label: string) => {
    const db = await fresh(label);
    const store = new PostgresStore({ connectionString: db.url });
    opened.push(store);
    await store.migrate();
    return { db, store };
  };

  it("refuses an SQLite store's position, one past the server's transactions, and one that says an open transaction had ended", async () => {
    const { db, store } = await open("positions");
    await store.createRun(newRun("a"), [{ type: "run.created" }]);
    for (const bad of ["s1", "s0", "pzzzzzzz", "p1~0~zzzzzzz"]) await expect(store.eventsAfter(bad), bad).rejects.toMatchObject({ code: "STEAD_BAD_POSITION" });
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      const xid = Number((await holder.query<{ x: string }>("SELECT pg_current_xact_id()::text AS x")).rows[0]?.x);
      // A later transaction ends, so the snapshot's xmax passes the open one and lists it as in progress.
      await store.commit([[{ runId: "a", events: [{ type: "later" }] }]]);
      const { position } = await store.eventsAfter(null);
      // The position lists the open transaction; without it, the position would claim it had ended.
      const [xmax, ...open36] = position.slice(1).split(".");
      expect(open36.map((d) => Number.parseInt(xmax ?? "", 36) - Number.parseInt(d, 36))).toContain(xid);
      await expect(store.eventsAfter(`p${xmax ?? ""}`)).rejects.toMatchObject({ code: "STEAD_BAD_POSITION" });
      await expect(store.eventsAfter(position)).resolves.toMatchObject({ events: [] });
    } finally {
      await holder.end();
    }
  });

  it("a store made at version 6 with events, migrated: its events are in the stream once, and the stream goes on", async () => {
    const db = await fresh("stream-v6");
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query(`CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);
        INSERT INTO stead_meta (key, value) VALUES ('marker', 'stead-store');`);
      for (const m of MIGRATIONS.filter((x) => x.version <= 6)) {
        await c.query(m.sql);
        await c.query("INSERT INTO stead_migrations (version, name, applied_at) VALUES ($1, $2, 0)", [m.version, m.name]);
      }
      await c.query("INSERT INTO runs (id, definition, status, input, created_at, updated_at) VALUES ('old', 'd', 'pending', '{}', 0, 0)");
      await c.query("INSERT INTO events (run_id, type, at, data) VALUES ('old', 'old.1', 0, '{}'), ('old', 'old.2', 0, '{}')");
    } finally {
      await c.end();
    }
    const store = new PostgresStore({ connectionString: db.url });
    opened.push(store);
    await store.migrate();
    const first = await store.eventsAfter(null);
    expect(first.events.map((e) => e.type)).toEqual(["old.1", "old.2"]);
    expect((await store.eventsAfter(first.position)).events).toEqual([]);
    await store.commit([[{ runId: "old", events: [{ type: "new.1" }] }]]);
    expect((await store.eventsAfter(first.position)).events.map((e) => e.type)).toEqual(["new.1"]);
  });
});
