/** Approval → next step on each store, against the worker's poll interval (see wakeup.ts). */
import { join } from "node:path";
import { openBenchServer } from "./pg-server.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { approvalToNextStep, type WakeupResult } from "./wakeup.js";

const REPEATS = 9;
/** Long enough that a poll could not pass for a wake-up: half of it is the average wait without one. */
const POLL_MS = 2_000;
/** The median must be this share of the poll interval or less. */
const TARGET_RATIO = 0.1;

function rows(store: string, r: WakeupResult): Row[] {
  const m = median(r.latencies);
  const ratio = m / r.pollMs;
  return [
    { name: `${store}: approval response -> next step, median`, value: `${fmt(m, 1)} ms`, target: "", pass: null, note: m <= 0 ? "the step began before the response arrived" : noisy(r.latencies) },
    { name: `${store}: approval request -> next step, median`, value: `${fmt(median(r.fromRequest), 1)} ms`, target: "", pass: null, note: noisy(r.fromRequest) },
    { name: `${store}: median / poll interval (${fmt(r.pollMs)} ms)`, value: `${fmt(ratio, 3)}x`, target: `<= ${fmt(TARGET_RATIO, 2)}x`, pass: ratio <= TARGET_RATIO },
    { name: `${store}: max`, value: `${fmt(Math.max(...r.latencies), 1)} ms`, target: "", pass: null },
  ];
}

export async function wakeupSuite(which: { sqlite: boolean; postgres: boolean }): Promise<void> {
  console.log(`Wake-ups (approval over HTTP -> the run's next step on a running worker polling every ${fmt(POLL_MS)} ms; ${REPEATS} repeats)\n`);
  const table: Row[] = [];
  if (which.sqlite) table.push(...rows("SQLite", await inScratch("wakeup", (d) => approvalToNextStep(join(d, "stead.db"), REPEATS, POLL_MS))));
  if (which.postgres) {
    const server = await openBenchServer();
    try {
      table.push(...rows("Postgres", await server.withDatabase("wakeup", (db) => approvalToNextStep(db.url, REPEATS, POLL_MS))));
    } finally {
      await server.close();
    }
  }
  printTable(table);
}
