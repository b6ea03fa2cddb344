/**
 * The Postgres store against raw Postgres commits on the same server, plus takeover latency.
 *
 * - W1 pairs: raw reference (its own database) then Stead (a fresh database), back to back; the
 *   ratio is the median of the pairs' ratios. Each Stead figure is split into time inside
 *   `store.commit` and the rest (the engine), and, where the bench may turn on `track_functions`
 *   (a superuser), the server's own time in the commit function.
 * - W2: 50 runs x 100 steps in one worker, concurrency 50, each on a fresh database.
 * - Takeover: see pg-takeover.ts.
 * - Scaling with 1, 2 and 4 worker processes: see pg-scaling-suite.ts.
 * - Run listing: see run-listing.ts.
 */
import { withClient } from "../test/setup/databases.js";
import { postgresListingSuite } from "./listing-suite.js";
import { openBenchServer, type BenchServer } from "./pg-server.js";
import { takeoverLatency, type TakeoverResult } from "./pg-takeover.js";
import { postgresScalingSuite } from "./pg-scaling-suite.js";
import { rawPostgresConcurrent, rawPostgresSequential } from "./raw-postgres.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { steadSequential, type SequentialResult } from "./w1-sequential.js";
import { steadConcurrent } from "./w2-concurrent.js";

const W1_STEPS = 1000;
const W1_REPEATS = 7;
const W2_RUNS = 50;
const W2_STEPS = 100;
const W2_REPEATS = 3;
const TAKEOVER_REPEATS = 5;
const COMMIT_FUNCTION = "stead_commit_logged";

const list = (xs: readonly number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(" / ");

interface W1Pair {
  raw: number;
  stead: SequentialResult;
  /** Server time per call of the commit function, µs; undefined when it could not be measured. */
  serverUs: number | undefined;
}

/**
 * One W1 run on a fresh database. `track_functions = all` is set on the database first (ignored
 * when not permitted); the function statistics are read once the store's connections have closed,
 * since a backend reports them at exit at the latest.
 */
async function steadW1(server: BenchServer): Promise<Omit<W1Pair, "raw">> {
  return server.withDatabase("w1", async (db) => {
    const tracked = await withClient(db.url, (c) => c.query(`ALTER DATABASE ${c.escapeIdentifier(db.name)} SET track_functions = 'all'`)).then(
      () => true,
      () => false,
    );
    const stead = await steadSequential(db.url, W1_STEPS, { timeCommits: true });
    const serverUs = tracked ? await functionUsPerCall(db.url, COMMIT_FUNCTION, stead.transactions) : undefined;
    return { stead, serverUs };
  });
}

async function functionUsPerCall(url: string, name: string, calls: number): Promise<number | undefined> {
  return withClient(url, async (c) => {
    const deadline = Date.now() + 3000;
    for (;;) {
      await c.query("SELECT pg_stat_clear_snapshot()");
      const row = (await c.query<{ calls: string; total: number }>("SELECT calls, total_time AS total FROM pg_stat_user_functions WHERE funcname = $1", [name])).rows[0];
      if (row && Number(row.calls) >= calls) return (row.total * 1000) / Number(row.calls);
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

export async function postgresSuite(): Promise<void> {
  const started = performance.now();
  const server = await openBenchServer();
  try {
    console.log(`Postgres store on ${server.description} (ready in ${fmt((performance.now() - started) / 1000, 1)} s)\n`);

    const pairs: W1Pair[] = [];
    const w2runs: { stepsPerSec: number; transactions: number; units: number }[] = [];
    await server.withDatabase("raw", async (rawDb) => {
      for (let r = 0; r < W1_REPEATS; r++) {
        const raw = (await rawPostgresSequential(rawDb.url, W1_STEPS)).usPerCommit;
        pairs.push({ raw, ...(await steadW1(server)) });
      }
    });
    const raw2: number[] = [];
    for (let r = 0; r < W2_REPEATS; r++) {
      raw2.push(await server.withDatabase("raw2", (db) => rawPostgresConcurrent(db.url, W2_RUNS, W2_STEPS)));
      w2runs.push(await server.withDatabase("w2", (db) => steadConcurrent(db.url, W2_RUNS, W2_STEPS)));
    }
    const takeover: TakeoverResult = await server.withDatabase("takeover", (db) => inScratch("pg-takeover", (dir) => takeoverLatency(db.url, dir, TAKEOVER_REPEATS)));

    const stead1 = pairs.map((p) => p.stead.usPerStep);
    const raw1 = pairs.map((p) => p.raw);
    const ratios = pairs.map((p) => p.stead.usPerStep / p.raw);
    const commitUs = pairs.map((p) => p.stead.commitUsPerStep);
    const serverUs = pairs.flatMap((p) => (p.serverUs === undefined ? [] : [p.serverUs]));
    const w1 = median(stead1);
    const raw = median(raw1);
    const ratio = median(ratios);
    const inCommit = median(commitUs);
    const engine = median(pairs.map((p) => p.stead.usPerStep - p.stead.commitUsPerStep));
    const fnUs = serverUs.length ? median(serverUs) : undefined;
    console.log(`W1  1 run x ${W1_STEPS} sequential steps, ${W1_REPEATS} pairs: stead ${list(stead1)} µs/step; raw ${list(raw1)} µs/commit; ratios ${list(ratios, 2)}`);
    console.log(
      `    per step: ${list(commitUs)} µs inside store.commit` +
        (fnUs === undefined ? " (server function time not measured: track_functions needs a superuser)" : `, of which ${list(serverUs)} µs in ${COMMIT_FUNCTION}() on the server`) +
        `; ${pairs[0]?.stead.transactions ?? 0} transactions per run`,
    );

    const w2 = [...w2runs].sort((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor(w2runs.length / 2)] ?? w2runs[0];
    if (!w2) throw new Error("W2 produced no result");
    const rawRate = 1e6 / raw;
    const w2ratios = w2runs.map((x, i) => x.stepsPerSec / (raw2[i] ?? NaN));
    console.log(`W2  ${W2_RUNS} runs x ${W2_STEPS} steps, concurrency ${W2_RUNS}: ${list(w2runs.map((x) => x.stepsPerSec))} steps/s; raw inserts from ${W2_RUNS} clients ${list(raw2)} rows/s; ${w2.transactions} transactions for ${w2.units} units (median run)`);

    const lat = takeover.latenciesMs;
    console.log(
      `TK  SIGKILL of worker a -> run's next step.completed on worker b, ${lat.length} times: ${list(lat)} ms` +
        ` (lease ended ${list(takeover.detectMs)} ms, claimed ${list(takeover.claimMs)} ms after the kill; clock offset ${takeover.clockOffsetMs} ms)`,
    );
    const byLock = takeover.paths.filter((p) => /connection closed/.test(p)).length;
    const other = takeover.paths.filter((p) => !/connection closed/.test(p));
    console.log(`    how the lease ended: ${byLock} of ${takeover.paths.length} by the liveness lock (the killed worker's connection closed)${other.length ? `; others: ${other.join("; ")}` : ""}`);
    console.log(`    claims of a running run: ${takeover.runningClaims}, of a live worker's run: ${takeover.liveTakeovers.length}${takeover.skipped ? `; ${takeover.skipped}` : ""}`);
    for (const t of takeover.liveTakeovers) console.log(`    LIVE TAKEOVER: ${t}`);
    console.log("");

    const tkMedian = lat.length ? median(lat) : NaN;
    const tkMax = lat.length ? Math.max(...lat) : NaN;
    const rows: Row[] = [
      { name: "W1 stead, 1 KB steps in sequence", value: `${fmt(w1)} µs/step (${fmt(1e6 / w1)} steps/s)`, target: "", pass: null },
      { name: "W1 raw Postgres, 1 autocommit INSERT per 1 KB row", value: `${fmt(raw)} µs/commit (${fmt(rawRate)} commits/s)`, target: "", pass: null },
      { name: "W1 ratio stead / raw (median of pairs)", value: `${fmt(ratio, 2)}x`, target: "<= 1.60x", pass: ratio <= 1.6, note: noisy(ratios) },
      {
        name: "W1 a step: store.commit + engine",
        value: `${fmt(inCommit)} + ${fmt(engine)} µs` + (fnUs === undefined ? "" : ` (server fn ${fmt(fnUs)} µs)`),
        target: "",
        pass: null,
      },
      { name: "W2 stead, 50 runs x 100 steps", value: `${fmt(w2.stepsPerSec)} steps/s`, target: "", pass: null, note: noisy(w2runs.map((x) => x.stepsPerSec)) },
      { name: "W2 ratio to raw commit rate", value: `${fmt(w2.stepsPerSec / rawRate, 2)}x`, target: "", pass: null },
      { name: `W2 stead / raw inserts from ${W2_RUNS} clients`, value: `${fmt(median(w2ratios), 2)}x (${fmt(median(raw2))} rows/s)`, target: ">= 0.80x", pass: median(w2ratios) >= 0.8, note: noisy(w2ratios) },
      { name: "W2 transactions written (group commit)", value: `${fmt(w2.transactions)} for ${fmt(w2.units)} units`, target: "", pass: null },
      { name: "Takeover SIGKILL -> next step, median", value: `${fmt(tkMedian)} ms`, target: "< 2000 ms", pass: tkMedian < 2000 },
      { name: "Takeover SIGKILL -> next step, max", value: `${fmt(tkMax)} ms`, target: "", pass: null },
      { name: "Takeover of a live worker's run", value: `${takeover.liveTakeovers.length} of ${takeover.runningClaims} claims`, target: "0", pass: takeover.liveTakeovers.length === 0 },
    ];
    printTable(rows);
    console.log("");
    await postgresScalingSuite(server);
    console.log("");
    await postgresListingSuite(server);
  } finally {
    await server.close();
  }
}
