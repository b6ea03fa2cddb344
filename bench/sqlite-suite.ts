/**
 * The SQLite store (WAL, synchronous=FULL) against raw SQLite commits on the same disk.
 *
 * The W1 ratio is the median of ratios of back-to-back pairs (raw, then Stead), so slow drift in
 * disk speed hits both sides of each pair.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rawSequential } from "./raw-sqlite.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
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

  const stead1: number[] = [];
  const raw1: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < W1_REPEATS; r++) {
    const raw = await inScratch("raw", (d) => rawSequential(d, W1_STEPS).usPerCommit);
    const stead = await inScratch("w1", async (d) => (await steadSequential(join(d, "stead.db"), W1_STEPS)).usPerStep);
    raw1.push(raw);
    stead1.push(stead);
    ratios.push(stead / raw);
  }
  const w1 = median(stead1);
  const raw = median(raw1);
  const ratio = median(ratios);
  console.log(`W1  1 run x ${W1_STEPS} sequential steps, ${W1_REPEATS} pairs: stead ${list(stead1)} µs/step; raw ${list(raw1)} µs/commit; ratios ${list(ratios, 2)}`);

  const w2runs: { stepsPerSec: number; transactions: number; units: number }[] = [];
  for (let r = 0; r < W2_REPEATS; r++) w2runs.push(await inScratch("w2", (d) => steadConcurrent(join(d, "stead.db"), W2_RUNS, W2_STEPS)));
  const w2 = [...w2runs].sort((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor(w2runs.length / 2)] ?? w2runs[0];
  if (!w2) throw new Error("W2 produced no result");
  const rawRate = 1e6 / raw;
  console.log(`W2  ${W2_RUNS} runs x ${W2_STEPS} steps, concurrency ${W2_RUNS}: ${list(w2runs.map((x) => x.stepsPerSec))} steps/s; ${w2.transactions} transactions for ${w2.units} units (median run)`);

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
    { name: "W1 stead, 1 KB steps in sequence", value: `${fmt(w1)} µs/step (${fmt(1e6 / w1)} steps/s)`, target: "", pass: null },
    { name: "W1 raw SQLite, 1 commit per 1 KB row", value: `${fmt(raw)} µs/commit (${fmt(rawRate)} commits/s)`, target: "", pass: null },
    { name: "W1 ratio stead / raw (median of pairs)", value: `${fmt(ratio, 2)}x`, target: "<= 1.30x", pass: ratio <= 1.3, note: noisy(ratios) },
    { name: "W2 stead, 50 runs x 100 steps", value: `${fmt(w2.stepsPerSec)} steps/s`, target: "", pass: null, note: noisy(w2runs.map((x) => x.stepsPerSec)) },
    { name: "W2 ratio to raw commit rate", value: `${fmt(w2.stepsPerSec / rawRate, 2)}x`, target: ">= 3.00x", pass: w2.stepsPerSec / rawRate >= 3 },
    { name: "W2 transactions written (group commit)", value: `${fmt(w2.transactions)} for ${fmt(w2.units)} units`, target: "", pass: null },
    { name: "W3 bare node start", value: `${fmt(node)} ms`, target: "", pass: null },
    { name: "W3 spawn -> next step (worker script)", value: `${fmt(w3)} ms`, target: "", pass: null, note: noisy(rec) },
    { name: "W3 recovery above bare node start", value: `+${fmt(w3 - node)} ms`, target: "<= +150 ms", pass: w3 - node <= 150 },
    { name: "W3 same via `stead worker` (CLI + tsx)", value: `${fmt(w3cli)} ms (+${fmt(w3cli - node)} ms)`, target: "", pass: null },
  ];
  printTable(rows);
}
