/**
 * Scale on the SQLite store: what a worker holds for runs parked on waits it is not executing, and
 * how fast starts and approvals go from many concurrent callers against how fast steps go (W2).
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlRates } from "./control-rate.js";
import { httpControlRates } from "./control-rate-http.js";
import { executedFootprint, parkedFootprint } from "./parked-memory.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { steadConcurrent } from "./w2-concurrent.js";

const PARKED = 100_000;
const EXECUTED = 10_000;
const EXECUTED_FEWER = 2_000;
const CONTROL_RUNS = 2_000;
const REPEATS = 3;
const MiB = 1024 * 1024;

export async function scaleSuite(): Promise<void> {
  console.log(`Scale on the SQLite store under ${tmpdir()}\n`);
  const memory = await inScratch("parked", (d) => parkedFootprint(d, PARKED));
  // Two counts: what a run adds is the slope between them; what a busy worker keeps whatever the
  // count (V8's young generation grown under load, allocator arenas) is in both.
  const fewer = await inScratch("executed-fewer", (d) => executedFootprint(d, EXECUTED_FEWER));
  const executed = await inScratch("executed", (d) => executedFootprint(d, EXECUTED));
  const grew = (memory.seeded.rss - memory.idle.rss) / MiB;
  const slope = (executed.rss - fewer.rss) / (EXECUTED - EXECUTED_FEWER) / 1024;
  const heapSlope = (executed.heapUsed - fewer.heapUsed) / (EXECUTED - EXECUTED_FEWER) / 1024;
  const youngGrew = (executed.newSpace - memory.idle.newSpace) / MiB;
  console.log(
    `Memory after a forced GC: idle worker RSS ${fmt(memory.idle.rss / MiB, 1)} MiB (heap ${fmt(memory.idle.heapUsed / MiB, 1)}); with ${fmt(PARKED)} seeded parked runs ${fmt(memory.seeded.rss / MiB, 1)} MiB (heap ${fmt(memory.seeded.heapUsed / MiB, 1)}); after executing ${fmt(EXECUTED_FEWER)} runs to their approval ${fmt(fewer.rss / MiB, 1)} MiB (heap ${fmt(fewer.heapUsed / MiB, 1)}, young generation ${fmt(fewer.newSpace / MiB, 1)}), ${fmt(EXECUTED)} runs ${fmt(executed.rss / MiB, 1)} MiB (heap ${fmt(executed.heapUsed / MiB, 1)}, young generation ${fmt(executed.newSpace / MiB, 1)}; idle ${fmt(memory.idle.newSpace / MiB, 1)})`,
  );

  const starts: number[] = [];
  const approvals: number[] = [];
  const httpStarts: number[] = [];
  const httpApprovals: number[] = [];
  const coldHttpStarts: number[] = [];
  const coldHttpApprovals: number[] = [];
  const steps: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const c = await inScratch("control", (d) => controlRates(d, CONTROL_RUNS));
    starts.push(c.startsPerSec);
    approvals.push(c.approvalsPerSec);
    const h = await inScratch("control-http", (d) => httpControlRates(d, CONTROL_RUNS));
    httpStarts.push(h.startsPerSec);
    httpApprovals.push(h.approvalsPerSec);
    coldHttpStarts.push(h.coldStartsPerSec);
    coldHttpApprovals.push(h.coldApprovalsPerSec);
    steps.push((await inScratch("w2", (d) => steadConcurrent(join(d, "stead.db"), 50, 100))).stepsPerSec);
  }
  const w2 = median(steps);
  const startRatio = median(starts) / w2;
  const approvalRatio = median(approvals) / w2;
  const httpStartRatio = median(httpStarts) / w2;
  const httpApprovalRatio = median(httpApprovals) / w2;
  console.log(`Control from 50 callers, ${fmt(CONTROL_RUNS)} runs, ${REPEATS} repeats: starts ${starts.map((x) => fmt(x)).join(" / ")} /s; approvals ${approvals.map((x) => fmt(x)).join(" / ")} /s; through the HTTP API (\`stead serve\`) its first ${fmt(CONTROL_RUNS)} starts ${coldHttpStarts.map((x) => fmt(x)).join(" / ")} /s, approvals ${coldHttpApprovals.map((x) => fmt(x)).join(" / ")} /s, the next ${fmt(CONTROL_RUNS)} starts ${httpStarts.map((x) => fmt(x)).join(" / ")} /s, approvals ${httpApprovals.map((x) => fmt(x)).join(" / ")} /s; W2 ${steps.map((x) => fmt(x)).join(" / ")} steps/s\n`);

  const rows: Row[] = [
    { name: `worker RSS, ${fmt(PARKED)} parked runs (seeded) vs idle`, value: `${grew >= 0 ? "+" : ""}${fmt(grew, 1)} MiB`, target: "<= +20 MiB", pass: grew <= 20 },
    { name: `worker after executing ${fmt(EXECUTED)} runs to a wait, vs idle`, value: `+${fmt((executed.rss - memory.idle.rss) / MiB, 1)} MiB RSS`, target: "", pass: null, note: `of which V8's young generation, grown under load: +${fmt(youngGrew, 1)} MiB` },
    { name: `  per run, from ${fmt(EXECUTED_FEWER)} to ${fmt(EXECUTED)} executed`, value: `${fmt(slope, 2)} KiB RSS, ${fmt(heapSlope, 2)} KiB heap`, target: "", pass: null },
    { name: "starts/s, 50 library callers / W2 steps/s", value: `${fmt(median(starts))} / ${fmt(w2)} (${fmt(startRatio, 2)}x)`, target: ">= 0.50x", pass: startRatio >= 0.5, note: noisy(starts) },
    { name: "approvals/s, 50 library callers / W2 steps/s", value: `${fmt(median(approvals))} / ${fmt(w2)} (${fmt(approvalRatio, 2)}x)`, target: ">= 0.50x", pass: approvalRatio >= 0.5, note: noisy(approvals) },
    { name: "starts/s, 50 HTTP callers / W2 steps/s", value: `${fmt(median(httpStarts))} / ${fmt(w2)} (${fmt(httpStartRatio, 2)}x)`, target: ">= 0.50x", pass: httpStartRatio >= 0.5, note: noisy(httpStarts) },
    { name: "approvals/s, 50 HTTP callers / W2 steps/s", value: `${fmt(median(httpApprovals))} / ${fmt(w2)} (${fmt(httpApprovalRatio, 2)}x)`, target: ">= 0.50x", pass: httpApprovalRatio >= 0.5, note: noisy(httpApprovals) },
    { name: `  the same, a fresh server's first ${fmt(CONTROL_RUNS)} of each`, value: `${fmt(median(coldHttpStarts) / w2, 2)}x / ${fmt(median(coldHttpApprovals) / w2, 2)}x`, target: "", pass: null, note: "V8 still compiling the server's hot paths" },
  ];
  printTable(rows);
}
