/**
 * Group commit with several transactions in flight (a worker on Postgres): what is queued is split
 * between them, and still every run's units reach the store in the order they were queued. The
 * store is real; a layer in front of it holds each commit back for a random few milliseconds, so
 * transactions started together reach it in any order, as they do over a pool's connections.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store, Unit } from "../src/store/types.js";
import { GroupCommitter, type GroupCommitOptions } from "../src/worker/group-commit.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";

/** The store, its commits held back (`delayFor` the nth commit, else at random), and how many it saw at once at most. */
function jittered(store: Store, delayFor: (n: number) => number = () => Math.random() * 8): { store: Store; maxConcurrent: () => number } {
  let now = 0;
  let max = 0;
  let calls = 0;
  const commit: Store["commit"] = async (units, options) => {
    now += 1;
    max = Math.max(max, now);
    const delay = delayFor(calls++);
    try {
      await new Promise((r) => setTimeout(r, delay));
      return await store.commit(units, options);
    } finally {
      now -= 1;
    }
  };
  return { store: new Proxy(store, { get: (t, p) => (p === "commit" ? commit : (Reflect.get(t, p, t) as unknown)) }), maxConcurrent: () => max };
}

const append = (runId: string, n: number): Unit => [{ runId, events: [{ type: "test.n", data: { n } }] }];

async function createRuns(on: OnStore, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) await on.stead.store.createRun({ id, definition: "d", module: null, fingerprint: null, input: "null", createdAt: Date.now() }, []);
  return ids;
}

/** Each run's `n`s in the order the store numbered its events. */
async function numbered(on: OnStore, ids: readonly string[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const id of ids) {
    const rows = await on.rows("SELECT data FROM events WHERE run_id = ? AND type = 'test.n' ORDER BY seq", id);
    out.set(id, rows.map((r) => (JSON.parse(String(r.data)) as { n: number }).n));
  }
  return out;
}

describe.each(STORE_KINDS)("group commit, several transactions in flight (%s)", (kind) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A store with `count` runs, and a committer in front of it whose commits are held back by `delayFor`. */
  async function setup(name: string, count: number, options: GroupCommitOptions, delayFor?: (n: number) => number) {
    const on = await onStore(kind, `inflight-${name}`);
    cleanups.push(() => on.cleanup());
    const ids = await createRuns(on, name, count);
    const j = jittered(on.stead.store, delayFor);
    return { on, ids, committer: new GroupCommitter(j.store, options), maxConcurrent: j.maxConcurrent };
  }

  it("units of forty runs queued together are split between four transactions at once (none under half a batch), every one written", async () => {
    const { on, ids, committer, maxConcurrent } = await setup("split", 40, { inFlight: 4, maxBatch: 20 });
    const results = await Promise.all(ids.map((id) => committer.commit(append(id, 0))));
    await committer.drain();
    expect(results.every((r) => r.ok)).toBe(true);
    expect(maxConcurrent()).toBe(4);
    expect(committer.stats.transactions).toBe(4);
    for (const [id, ns] of await numbered(on, ids)) expect([id, ns]).toEqual([id, [0]]);
  });

  it("a queue is not split into batches under half the largest: forty units, batches of up to forty, two transactions", async () => {
    const { on, ids, committer, maxConcurrent } = await setup("halves", 40, { inFlight: 4, maxBatch: 40 });
    await Promise.all(ids.map((id) => committer.commit(append(id, 0))));
    expect(committer.stats.transactions).toBe(2);
    expect(maxConcurrent()).toBe(2);
    expect([...(await numbered(on, ids)).values()].flat()).toHaveLength(40);
  });

  it("a remainder under half a batch goes with the first transaction rather than wait behind it: thirty units, batches of up to 48, one transaction", async () => {
    const { on, ids, committer } = await setup("remainder", 30, { inFlight: 2, maxBatch: 48 });
    await Promise.all(ids.map((id) => committer.commit(append(id, 0))));
    expect(committer.stats.transactions).toBe(1);
    expect([...(await numbered(on, ids)).values()].flat()).toHaveLength(30);
  });

  it("a unit held back for one run holds back the later units of every run it names", async () => {
    // The first commit (x's) is slow; any later one is written at once.
    const { on, ids, committer } = await setup("hold", 2, { inFlight: 2, maxBatch: 4 }, (n) => (n === 0 ? 40 : 0));
    const [x, y] = ids as [string, string];
    const first = committer.commit(append(x, 0));
    await new Promise((r) => setImmediate(r));
    // Both of y's units must wait for x's: the first names x too, the second follows it.
    const both: Unit = [...append(x, 1), ...append(y, 1)];
    const done = await Promise.all([first, committer.commit(both), committer.commit(append(y, 2))]);
    await committer.drain();
    expect(done.every((r) => r.ok)).toBe(true);
    const ns = await numbered(on, [x, y]);
    expect(ns.get(x)).toEqual([0, 1]);
    expect(ns.get(y)).toEqual([1, 2]);
  });

  it("a run's units land in the order they were queued, however the transactions holding them finish", async () => {
    const { on, ids, committer, maxConcurrent } = await setup("order", 6, { inFlight: 4, maxBatch: 3 });
    const pending: Promise<unknown>[] = [];
    // Some queued in one turn, some turns later while earlier ones are still being written.
    for (let n = 0; n < 60; n++) {
      pending.push(committer.commit(append(ids[n % ids.length] as string, n)));
      if (n % 7 === 6) await new Promise((r) => setTimeout(r, Math.random() * 4));
    }
    await Promise.all(pending);
    await committer.drain();
    expect(maxConcurrent()).toBeGreaterThan(1);
    for (const [id, ns] of await numbered(on, ids)) expect([id, ns]).toEqual([id, [...ns].sort((a, b) => a - b)]);
    const all = [...(await numbered(on, ids)).values()].flat();
    expect(all.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
  });

  it("drain waits for every transaction in flight and every unit still queued behind them", async () => {
    const { on, ids, committer } = await setup("drain", 3, { inFlight: 2, maxBatch: 1 });
    for (let n = 0; n < 12; n++) void committer.commit(append(ids[n % 3] as string, n));
    await committer.drain();
    expect([...(await numbered(on, ids)).values()].flat().length).toBe(12);
  });
});
