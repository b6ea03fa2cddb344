/**
 * The SQLite store (WAL, synchronous=FULL) against the minimal journal (minimal-journal.ts) and
 * raw SQLite commits on the same disk, with the disk's fsync cost beside them.
 *
 * A W1 ratio is the median of the ratios of each repeat, whose sides run back to back, so slow
 * drift in disk speed hits both sides alike. The store alone (store-alone.ts: the same commits
 * without the engine) is printed beside each, so a ratio splits into the store's share and the
 * engine's.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { minimalConcurrent, minimalSequential } from "./minimal-journal.js";
import { fsyncUs, rawSequential } from "./raw-sqlite.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { storeAloneConcurrent, storeAloneSequential } from "./store-alone.js";
import { steadSequential } from "./w1-sequential.js";
import { steadConcurrent } from "./w2-concurrent.js";
import { bareNodeStartMs, recoveryMs } from "./w3-recovery.js";

const W1_STEPS = 1000;
const W1_REPEATS = 7;
const W2_RUNS = 50;
const W2_STEPS = 100;
const W2_REPEATS = 3;
const W3_REPEATS = 5;

const list = (xs: readonly number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(" / ");

export async function sqliteSuite(): Promise<void> {
  console.log(`SQLite store (WAL, synchronous=FULL) under ${tmpdir()}\n`);

  // Each repeat measures every W1 side back to back on one disk, so drift hits them alike; a
  // ratio is the median of the repeats' ratios.
  const w1 = { raw: [] as number[], minimal: [] as number[], stead: [] as number[], minimalNormal: [] as number[], steadNormal: [] as number[], store: [] as number[], storeNormal: [] as number[], fsync: [] as number[] };
  const ratios = { raw: [] as number[], minimal: [] as number[], normal: [] as number[], store: [] as number[], storeNormal: [] as number[] };
  for (let r = 0; r < W1_REPEATS; r++) {
    const fsync = await inScratch("fsync", (d) => fsyncUs(d));
    const raw = await inScratch("raw", (d) => rawSequential(d, W1_STEPS).usPerCommit);
    const minimal = await inScratch("min", (d) => minimalSequential(d, W1_STEPS, "FULL"));
    const stead = await inScratch("w1", async (d) => (await steadSequential(join(d, "stead.db"), W1_STEPS)).usPerStep);
    const minimalNormal = await inScratch("min-n", (d) => minimalSequential(d, W1_STEPS, "NORMAL"));
    const steadNormal = await inScratch("w1-n", async (d) => (await steadSequential(join(d, "stead.db"), W1_STEPS, { synchronous: "NORMAL" })).usPerStep);
    const store = await inScratch("w1-store", (d) => storeAloneSequential(d, W1_STEPS, "FULL"));
    const storeNormal = await inScratch("w1-store-n", (d) => storeAloneSequential(d, W1_STEPS, "NORMAL"));
    Object.entries({ raw, minimal, stead, minimalNormal, steadNormal, store, storeNormal, fsync }).forEach(([k, v]) => w1[k as keyof typeof w1].push(v));
    ratios.store.push(store / minimal);
    ratios.storeNormal.push(storeNormal / minimalNormal);
    ratios.raw.push(stead / raw);
    ratios.minimal.push(stead / minimal);
    ratios.normal.push(steadNormal / minimalNormal);
  }
  const m = Object.fromEntries(Object.entries(w1).map(([k, v]) => [k, median(v)])) as Record<keyof typeof w1, number>;
  const fsyncNote = `fsync ${fmt(m.fsync)} µs`;
  console.log(`W1  1 run x ${W1_STEPS} sequential steps, ${W1_REPEATS} repeats (µs/step): stead ${list(w1.stead)}; minimal journal ${list(w1.minimal)}; raw commit ${list(w1.raw)}; with synchronous=NORMAL stead ${list(w1.steadNormal)}, minimal ${list(w1.minimalNormal)}; store alone ${list(w1.store)}, with NORMAL ${list(w1.storeNormal)}; fsync ${list(w1.fsync)} µs`);

  const w2runs: { stepsPerSec: number; transactions: number; units: number }[] = [];
  const minimal2: number[] = [];
  const w2ratios: number[] = [];
  const store2: number[] = [];
  const store2ratios: number[] = [];
  for (let r = 0; r < W2_REPEATS; r++) {
    const ref = await inScratch("min2", (d) => minimalConcurrent(d, W2_RUNS, W2_STEPS));
    const run = await inScratch("w2", (d) => steadConcurrent(join(d, "stead.db"), W2_RUNS, W2_STEPS));
    const alone = await inScratch("w2-store", (d) => storeAloneConcurrent(d, W2_RUNS, W2_STEPS));
    store2.push(alone);
    store2ratios.push(alone / ref);
    minimal2.push(ref);
    w2runs.push(run);
    w2ratios.push(run.stepsPerSec / ref);
  }
  const w2 = [...w2runs].sort((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor(w2runs.length / 2)] ?? w2runs[0];
  if (!w2) throw new Error("W2 produced no result");
  const w2ratio = median(w2ratios);
  console.log(`W2  ${W2_RUNS} runs x ${W2_STEPS} steps, concurrency ${W2_RUNS}: stead ${list(w2runs.map((x) => x.stepsPerSec))} steps/s; minimal journal with group commit ${list(minimal2)}; store alone ${list(store2)}; ${w2.transactions} transactions for ${w2.units} units (median run)`);

  const bare: number[] = [];
  const rec: number[] = [];
  const recCli: number[] = [];
  for (let r = 0; r < W3_REPEATS; r++) {
    bare.push(await bareNodeStartMs());
    rec.push(await inScratch("w3", (d) => recoveryMs(d, "library")));
    recCli.push(await inScratch("w3cli", (d) => recoveryMs(d, "cli")));
  }
  const w3 = median(rec);
  const w3cli = median(recCli);
  const node = median(bare);
  console.log(`W3  kill -9 after step 100 of 200, ${W3_REPEATS} times, spawn -> step 101 committed: worker script ${list(rec)} ms; \`stead worker\` ${list(recCli)} ms; bare node start ${list(bare)} ms\n`);

  const rows: Row[] = [
    { name: "W1 stead, 1 KB steps in sequence", value: `${fmt(m.stead)} µs/step (${fmt(1e6 / m.stead)} steps/s)`, target: "", pass: null, note: fsyncNote },
    { name: "W1 minimal journal (1 insert per step)", value: `${fmt(m.minimal)} µs/step`, target: "", pass: null },
    { name: "W1 raw SQLite, 1 commit per 1 KB row", value: `${fmt(m.raw)} µs/commit`, target: "", pass: null },
    { name: "W1 stead / minimal journal (median)", value: `${fmt(median(ratios.minimal), 2)}x`, target: "<= 1.15x", pass: median(ratios.minimal) <= 1.15, note: noisy(ratios.minimal) ?? fsyncNote },
    { name: "W1 store alone / minimal journal", value: `${fmt(m.store)} µs/step (${fmt(median(ratios.store), 2)}x)`, target: "", pass: null, note: "the floor under W1: the store's commits without the engine" },
    { name: "W1 stead / raw commit (median)", value: `${fmt(median(ratios.raw), 2)}x`, target: "", pass: null },
    { name: "W1 synchronous=NORMAL: stead / minimal", value: `${fmt(m.steadNormal)} / ${fmt(m.minimalNormal)} µs (${fmt(median(ratios.normal), 2)}x)`, target: "<= 1.50x", pass: median(ratios.normal) <= 1.5, note: noisy(ratios.normal) },
    { name: "W1 synchronous=NORMAL: store alone / minimal", value: `${fmt(m.storeNormal)} µs/step (${fmt(median(ratios.storeNormal), 2)}x)`, target: "", pass: null },
    { name: "W2 stead, 50 runs x 100 steps", value: `${fmt(w2.stepsPerSec)} steps/s`, target: "", pass: null, note: noisy(w2runs.map((x) => x.stepsPerSec)) },
    { name: "W2 stead / minimal journal, group commit", value: `${fmt(w2ratio, 2)}x (${fmt(median(minimal2))} steps/s)`, target: ">= 1.30x", pass: w2ratio >= 1.3, note: noisy(w2ratios) ?? fsyncNote },
    { name: "W2 store alone / minimal journal", value: `${fmt(median(store2ratios), 2)}x (${fmt(median(store2))} steps/s)`, target: "", pass: null, note: "the ceiling over W2: the store's commits without the engine" },
    { name: "W2 transactions written (group commit)", value: `${fmt(w2.transactions)} for ${fmt(w2.units)} units`, target: "", pass: null },
    { name: "W3 bare node start", value: `${fmt(node)} ms`, target: "", pass: null },
    { name: "W3 spawn -> next step (worker script)", value: `${fmt(w3)} ms`, target: "", pass: null, note: noisy(rec) },
    { name: "W3 recovery above bare node start", value: `+${fmt(w3 - node)} ms`, target: "<= +100 ms", pass: w3 - node <= 100 },
    { name: "W3 same via `stead worker` (CLI + tsx)", value: `${fmt(w3cli)} ms (+${fmt(w3cli - node)} ms)`, target: "<= +150 ms", pass: w3cli - node <= 150 },
  ];
  printTable(rows);
}
