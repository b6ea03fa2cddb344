/**
 * The scaling curve on Postgres (pg-scaling.ts): 1, 2 and 4 worker processes on 500 runs x 100
 * steps, each point on a fresh database, with the CPU of the workers, of the server and of the
 * machine beside it, and the server's own commit rate from 50 plain clients as the ceiling.
 *
 * A point passes when its throughput grows over the one before (by 10% at least), or the one
 * before had already reached a limit: the machine's cores (busy 90% or more) or the database's own
 * commit rate (the transactions it committed per second, 80% or more of what 50 plain clients
 * commit one row at a time). Steps are not commits: group commit puts many steps of concurrent
 * runs in one transaction, so steps/s may pass the plain clients' rows/s well before the
 * commit rate is the limit. The table says which limit each point met.
 */
import type { BenchServer } from "./pg-server.js";
import { scalingPoint, type ScalingPoint } from "./pg-scaling.js";
import { rawPostgresConcurrent } from "./raw-postgres.js";
import { fmt, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";

const WORKERS = [1, 2, 4] as const;
const RUNS = 500;
const STEPS = 100;
const CONCURRENCY = 50;
const RAW_CLIENTS = 50;
const RAW_ROWS = 100;
const CPU_LIMIT = 0.9;
const COMMIT_LIMIT = 0.8;
const GROWTH = 1.1;

function limitOf(p: ScalingPoint, raw: number): string | undefined {
  if (p.machineBusy >= CPU_LIMIT) return `the machine's ${p.cores} cores (${fmt(p.machineBusy * 100)}% busy)`;
  if (p.commitsPerSec >= COMMIT_LIMIT * raw) return `the database's commit rate (${fmt(p.commitsPerSec)} commits/s, ${fmt((p.commitsPerSec / raw) * 100)}% of ${RAW_CLIENTS} plain clients')`;
  return undefined;
}

export async function postgresScalingSuite(server: BenchServer): Promise<void> {
  const raw = await server.withDatabase("scaling-raw", (db) => rawPostgresConcurrent(db.url, RAW_CLIENTS, RAW_ROWS));
  const points: ScalingPoint[] = [];
  for (const workers of WORKERS) {
    points.push(await server.withDatabase(`scaling-${workers}`, (db) => inScratch("pg-scaling", (dir) => scalingPoint(db.url, dir, workers, RUNS, STEPS, CONCURRENCY))));
  }
  const cpu = (p: ScalingPoint) =>
    `workers ${fmt(p.workerCores, 2)}, server ${p.serverCores === undefined ? "not on this machine" : fmt(p.serverCores, 2)} cores; machine ${fmt(p.machineBusy * 100)}% of ${p.cores}; ${fmt(p.commitsPerSec)} commits/s`;
  console.log(`SC  ${RUNS} runs x ${STEPS} steps, worker processes of concurrency ${CONCURRENCY}: ${points.map((p) => `${p.workers} -> ${fmt(p.stepsPerSec)} steps/s (${cpu(p)})`).join("; ")}; ${RAW_CLIENTS} plain clients ${fmt(raw)} rows/s\n`);
  const first = points[0];
  const rows: Row[] = points.map((p, i) => {
    const before = points[i - 1];
    const limit = limitOf(p, raw);
    const growth = before ? p.stepsPerSec / before.stepsPerSec : 1;
    const limitBefore = before ? limitOf(before, raw) : undefined;
    const pass = before ? growth >= GROWTH || limitBefore !== undefined : null;
    const note = limit ? `limit: ${limit}` : before && !pass ? "grew less than 10% with neither limit reached" : "no limit reached";
    return {
      name: `Scaling, ${p.workers} worker${p.workers > 1 ? "s" : ""}: steps/s (vs 1 worker)`,
      value: `${fmt(p.stepsPerSec)} (${fmt(first ? p.stepsPerSec / first.stepsPerSec : NaN, 2)}x); CPU ${cpu(p)}`,
      target: before ? `grows, or limit at ${before.workers}` : "",
      pass,
      note,
    };
  });
  rows.push({ name: `Scaling: the database's commit rate (${RAW_CLIENTS} plain clients)`, value: `${fmt(raw)} commits/s (one row each)`, target: "", pass: null });
  printTable(rows);
}
