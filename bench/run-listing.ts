/**
 * Run listing on a large store against the same on a small one: a page's cost should grow with
 * the page, not with the store (target: 1,000,000 runs within 2x of 1,000).
 *
 * Both stores are seeded in bulk, straight into `runs` in a few large transactions (the shape is
 * test/helpers/seed-runs.ts's, shared with the listing's query-plan test), then measured through
 * the built store's `listRuns`, as `stead ps` and the server call it. For each listing shape: the
 * first page, and a page from a cursor half-way through its matches (reached by walking pages of
 * 1,000, timed as well). Each figure is the mean of a batch of calls; the ratio is the median of
 * back-to-back pairs (small store, then large), so drift hits both sides of a pair.
 */
import { fmt, median, noisy, type Row } from "./report.js";
import type { RunQuery, Store } from "../src/store/types.js";

export const SMALL = 1_000;
export const LARGE = 1_000_000;
const PAGE = 50;
const CALLS = 100;
const PAIRS = 7;

const SHAPES: { name: string; query: RunQuery; matches: (n: number) => number }[] = [
  { name: "newest first", query: {}, matches: (n) => n },
  { name: "one status (pending, 1 in 10)", query: { status: ["pending"] }, matches: (n) => n / 10 },
  { name: "two statuses (waiting, held)", query: { status: ["waiting", "held"] }, matches: (n) => n / 5 },
  { name: "by updatedAt, oldest first", query: { sort: "updatedAt", order: "asc" }, matches: (n) => n },
];

export interface SeededStore {
  store: Store;
  runs: number;
  seedSeconds: number;
}

/** The cursor `skip` matches into a listing, walking pages of up to 1,000; and the walk's pace. */
async function cursorAt(store: Store, query: RunQuery, skip: number): Promise<{ cursor: string; msPerPage: number }> {
  let cursor: string | undefined;
  let pages = 0;
  const t0 = performance.now();
  for (let left = skip; left > 0; pages++) {
    const page = await store.listRuns({ ...query, limit: Math.min(1_000, left), ...(cursor === undefined ? {} : { cursor }) });
    if (page.nextCursor === null) throw new Error(`the listing ${JSON.stringify(query)} ended before ${skip} runs`);
    cursor = page.nextCursor;
    left -= page.runs.length;
  }
  if (cursor === undefined) throw new Error("no cursor for a walk of no runs");
  return { cursor, msPerPage: (performance.now() - t0) / pages };
}

/** µs per call of one page, the mean of a batch. */
async function pageUs(store: Store, query: RunQuery): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const page = await store.listRuns(query);
    if (page.runs.length !== PAGE) throw new Error(`a page of ${page.runs.length} runs, not ${PAGE}, for ${JSON.stringify(query)}`);
  }
  return ((performance.now() - t0) * 1000) / CALLS;
}

interface Pair {
  small: number;
  large: number;
}

const ratioOf = (pairs: readonly Pair[]) => median(pairs.map((p) => p.large / p.small));

/** The figures and table rows for one dialect's two stores. */
export async function listingRows(small: SeededStore, large: SeededStore): Promise<{ lines: string[]; rows: Row[] }> {
  const lines: string[] = [];
  const rows: Row[] = [];
  for (const shape of SHAPES) {
    const deepS = await cursorAt(small.store, shape.query, shape.matches(small.runs) / 2);
    const deepL = await cursorAt(large.store, shape.query, shape.matches(large.runs) / 2);
    const first: Pair[] = [];
    const deep: Pair[] = [];
    for (let r = 0; r < PAIRS; r++) {
      first.push({ small: await pageUs(small.store, { ...shape.query, limit: PAGE }), large: await pageUs(large.store, { ...shape.query, limit: PAGE }) });
      deep.push({ small: await pageUs(small.store, { ...shape.query, limit: PAGE, cursor: deepS.cursor }), large: await pageUs(large.store, { ...shape.query, limit: PAGE, cursor: deepL.cursor }) });
    }
    const us = (pairs: readonly Pair[], side: keyof Pair) => fmt(median(pairs.map((p) => p[side])));
    lines.push(
      `${shape.name}: first page ${us(first, "small")} µs (${fmt(small.runs)}) vs ${us(first, "large")} µs (${fmt(large.runs)}); ` +
        `half-way page ${us(deep, "small")} vs ${us(deep, "large")} µs; walking there ${fmt(deepL.msPerPage, 1)} ms per 1,000-run page`,
    );
    for (const [which, pairs] of [["first page", first], ["half-way page (cursor)", deep]] as const) {
      const ratio = ratioOf(pairs);
      rows.push({
        name: `${shape.name}, ${which}`,
        value: `${fmt(ratio, 2)}x`,
        target: "<= 2.00x",
        pass: ratio <= 2,
        note: noisy(pairs.map((p) => p.large / p.small)),
      });
    }
  }
  return { lines, rows };
}
