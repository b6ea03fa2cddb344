/**
 * What an operator's maintenance commands cost, on the SQLite store: reading a dump whose one line
 * is a 10 MB workspace file, against reading its bytes; and retention's deletes overwritten
 * (secure_delete, the -wal emptied after), against plain deletes, VACUUM, and ordinary steps.
 */
import { join } from "node:path";
import { dumpWithBigFile, FILE_BYTES, importDumpMs, readBytesMs, verifyDumpMs } from "./import-long-line.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { gcMs, seedRetentionStore, stepsMsPerStep, vacuumMs } from "./retention-erase.js";
import { inScratch } from "./temp-dir.js";

const REPEATS = 5;
const OLD_RUNS = 500;
const KEPT_RUNS = 1_500;
const STEPS = 300;
const mb = (n: number) => `${fmt(n / 1e6, 1)} MB`;

export async function maintenanceSuite(): Promise<void> {
  console.log(`Maintenance (SQLite store): a dump holding one ${mb(FILE_BYTES)} workspace file; retention of ${OLD_RUNS} of ${OLD_RUNS + KEPT_RUNS} runs (3 steps of ~1 KB each)\n`);
  const rows = [...(await inScratch("maintenance-dump", dumpRows)), ...(await inScratch("maintenance-gc", gcRows))];
  printTable(rows);
}

async function dumpRows(dir: string): Promise<Row[]> {
  const { dump, bytes } = await dumpWithBigFile(dir);
  const pairs: [number, number][] = [];
  const imports: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Alternating which goes first: the second of a pair finds the file in the page cache either way.
    if (i % 2 === 0) {
      const read = await readBytesMs(dump);
      pairs.push([read, await verifyDumpMs(dump)]);
    } else {
      const verify = await verifyDumpMs(dump);
      pairs.push([await readBytesMs(dump), verify]);
    }
    imports.push(await importDumpMs(dump, join(dir, `import-${i}.db`)));
  }
  const ratios = pairs.map(([r, v]) => v / r);
  const ratio = median(ratios);
  return [
    { name: `read the dump's ${mb(bytes)} to their end`, value: `${fmt(median(pairs.map(([r]) => r)), 1)} ms`, target: "", pass: null, note: noisy(pairs.map(([r]) => r)) },
    { name: "check the dump whole (lines, rows, digests)", value: `${fmt(median(pairs.map(([, v]) => v)), 1)} ms`, target: "", pass: null, note: noisy(pairs.map(([, v]) => v)) },
    { name: "check / read (median of pairs)", value: `${fmt(ratio, 1)}x`, target: "<= 30x", pass: ratio <= 30, note: noisy(ratios) },
    { name: "  stead import of it into a new store", value: `${fmt(median(imports), 0)} ms`, target: "", pass: null, note: noisy(imports) },
  ];
}

async function gcRows(dir: string): Promise<Row[]> {
  const seeded = join(dir, "seeded.db");
  const { bytes } = await seedRetentionStore(seeded, OLD_RUNS, KEPT_RUNS);
  const gc: [number, number][] = [];
  const vacuum: number[] = [];
  const step: [number, number][] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Each pair back to back, the first alternating.
    const plain = () => gcMs(seeded, join(dir, `plain-${i}.db`), false);
    const erased = () => gcMs(seeded, join(dir, `erased-${i}.db`), true);
    gc.push(i % 2 === 0 ? [await plain(), await erased()] : (([e, p]) => [p, e] as [number, number])([await erased(), await plain()]));
    vacuum.push(await vacuumMs(seeded, join(dir, `vacuum-${i}.db`)));
    const off = () => stepsMsPerStep(join(dir, `steps-off-${i}.db`), STEPS, false);
    const on = () => stepsMsPerStep(join(dir, `steps-on-${i}.db`), STEPS, true);
    step.push(i % 2 === 0 ? [await off(), await on()] : (([n, f]) => [f, n] as [number, number])([await on(), await off()]));
  }
  const gcRatios = gc.map(([p, e]) => e / p);
  const vacuumRatios = gc.map(([, e], i) => (vacuum[i] ?? NaN) / e);
  const stepRatios = step.map(([off, on]) => on / off);
  return [
    { name: `gc of ${OLD_RUNS} runs (store ${mb(bytes)}), plain deletes`, value: `${fmt(median(gc.map(([p]) => p)), 0)} ms`, target: "", pass: null, note: noisy(gc.map(([p]) => p)) },
    { name: "  overwritten (secure_delete, -wal emptied)", value: `${fmt(median(gc.map(([, e]) => e)), 0)} ms`, target: "", pass: null, note: noisy(gc.map(([, e]) => e)) },
    { name: "gc overwritten / plain (median of pairs)", value: `${fmt(median(gcRatios), 2)}x`, target: "<= 3.00x", pass: median(gcRatios) <= 3, note: noisy(gcRatios) },
    // VACUUM rewrites every row kept, under an exclusive lock: it grows with the store, not with what is deleted.
    { name: "  VACUUM after a plain gc (the --vacuum way)", value: `${fmt(median(vacuum), 0)} ms, ${fmt(median(vacuum) / (bytes / 1e6), 1)} ms per MB of store (${fmt(median(vacuumRatios), 1)}x the overwritten gc)`, target: "", pass: null, note: noisy(vacuum) },
    { name: `${STEPS} sequential 1 KB steps, secure_delete on / off`, value: `${fmt(median(stepRatios), 2)}x`, target: "<= 1.10x", pass: median(stepRatios) <= 1.1, note: noisy(stepRatios) },
  ];
}
