/**
 * `npm run bench [-- --sqlite-only | --postgres-only] [--listing-only | --streams-only | --wakeup-only | --console-only | --encryption-only | --scale-only | --scaling-only | --maintenance-only | --profile]`: throughput, recovery, stream and wake-up figures against
 * their targets, on the SQLite store and on the Postgres store (STEAD_BENCH_DATABASE_URL, or an
 * embedded server started here). It reports and exits 0 whether targets are met or missed; it
 * fails only when a workload itself goes wrong (e.g. a run that does not recover).
 *
 * The machine's disk and CPU are shared with whatever else runs: every figure is a median of
 * repeats, ratios are medians of back-to-back pairs, and a figure whose repeats disagree widely
 * says so.
 */
import { consoleSuite } from "./console-suite.js";
import { postgresListingSuite, sqliteListingSuite } from "./listing-suite.js";
import { encryptionSuite } from "./encryption-suite.js";
import { BenchSetupError, openBenchServer, type BenchServer } from "./pg-server.js";
import { postgresSuite } from "./postgres-suite.js";
import { postgresScalingSuite } from "./pg-scaling-suite.js";
import { fmt } from "./report.js";
import { profileSuite } from "./profile.js";
import { scaleSuite } from "./scale-suite.js";
import { sqliteSuite } from "./sqlite-suite.js";
import { workspaceSuite } from "./workspace-suite.js";
import { maintenanceSuite } from "./maintenance-suite.js";
import { sessionSuite } from "./session-suite.js";
import { streamsSuite } from "./streams-suite.js";
import { wakeupSuite } from "./wakeup-suite.js";

const FLAGS = ["--sqlite-only", "--postgres-only", "--listing-only", "--streams-only", "--wakeup-only", "--console-only", "--encryption-only", "--scale-only", "--scaling-only", "--maintenance-only", "--profile"] as const;
const ONLY = ["--listing-only", "--streams-only", "--wakeup-only", "--console-only", "--encryption-only", "--scale-only", "--scaling-only", "--maintenance-only", "--profile"] as const;

function parseArgs(argv: readonly string[]): { sqlite: boolean; postgres: boolean; listingOnly: boolean; streamsOnly: boolean; wakeupOnly: boolean; consoleOnly: boolean; encryptionOnly: boolean; scaleOnly: boolean; scalingOnly: boolean; maintenanceOnly: boolean; profile: boolean } {
  const unknown = argv.filter((a) => !(FLAGS as readonly string[]).includes(a));
  if (unknown.length) throw new UsageError(`unknown argument ${unknown.map((a) => JSON.stringify(a)).join(", ")}`);
  const sqliteOnly = argv.includes("--sqlite-only");
  const postgresOnly = argv.includes("--postgres-only");
  if (sqliteOnly && postgresOnly) throw new UsageError("--sqlite-only and --postgres-only exclude each other");
  if (sqliteOnly && argv.includes("--scaling-only")) throw new UsageError("--scaling-only measures Postgres: it does not go with --sqlite-only");
  const only = ONLY.filter((f) => argv.includes(f));
  if (only.length > 1) throw new UsageError(`${only.join(" and ")} exclude each other`);
  return { sqlite: !postgresOnly, postgres: !sqliteOnly, listingOnly: argv.includes("--listing-only"), streamsOnly: argv.includes("--streams-only"), wakeupOnly: argv.includes("--wakeup-only"), consoleOnly: argv.includes("--console-only"), encryptionOnly: argv.includes("--encryption-only"), scaleOnly: argv.includes("--scale-only"), scalingOnly: argv.includes("--scaling-only"), maintenanceOnly: argv.includes("--maintenance-only"), profile: argv.includes("--profile") };
}

class UsageError extends Error {}

/** `fn` with a Postgres server when asked for (stopped after), else without. */
async function withOptionalServer(postgres: boolean, fn: (server: BenchServer | undefined) => Promise<void>): Promise<void> {
  if (!postgres) return fn(undefined);
  const server = await openBenchServer();
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const which = parseArgs(process.argv.slice(2));
  const started = performance.now();
  console.log(`Stead benchmarks: node ${process.version}, built library (dist/)\n`);
  if (which.streamsOnly) {
    await streamsSuite();
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.consoleOnly) {
    await consoleSuite();
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.encryptionOnly) {
    await withOptionalServer(which.postgres, encryptionSuite);
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.profile) {
    await profileSuite();
    return;
  }
  if (which.scalingOnly) {
    await withOptionalServer(true, async (server) => {
      if (server) await postgresScalingSuite(server);
    });
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.maintenanceOnly) {
    await maintenanceSuite();
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.scaleOnly) {
    await scaleSuite();
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.listingOnly) {
    if (which.sqlite) await sqliteListingSuite();
    if (which.postgres) {
      const server = await openBenchServer();
      try {
        console.log(`\n${server.description}`);
        await postgresListingSuite(server);
      } finally {
        await server.close();
      }
    }
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.wakeupOnly) {
    await wakeupSuite(which);
    console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
    return;
  }
  if (which.sqlite) await sqliteSuite();
  if (which.sqlite) {
    console.log("");
    await scaleSuite();
    console.log("");
    await workspaceSuite();
    console.log("");
    await maintenanceSuite();
    console.log("");
    await sessionSuite();
    console.log("");
    await sqliteListingSuite();
    console.log("");
    await streamsSuite();
    console.log("");
    await consoleSuite();
  }
  if (which.sqlite && which.postgres) console.log("");
  if (which.postgres) await postgresSuite();
  console.log("");
  await withOptionalServer(which.postgres, encryptionSuite);
  console.log("");
  await wakeupSuite(which);
  console.log(`\nbench time ${fmt((performance.now() - started) / 1000, 1)} s; a target missed is reported, not failed.`);
}

// Hazard: a suite awaiting a promise that only unreferenced handles could settle lets node exit 0
// midway, the suites after it never run, and the run looks finished. Say so, and fail.
let finished = false;
process.on("exit", (code) => {
  if (finished || code !== 0) return;
  console.error("stead bench: node's event loop emptied before the bench finished: a suite awaited something no live handle could settle");
  process.exitCode = 1;
});

main().then(() => (finished = true), (e: unknown) => {
  if (e instanceof UsageError) {
    console.error(`stead bench: ${e.message}\nfix: npm run bench [-- --sqlite-only | --postgres-only] [--listing-only | --streams-only | --wakeup-only | --console-only | --encryption-only | --scale-only | --scaling-only | --maintenance-only | --profile]`);
    process.exit(2);
  }
  if (e instanceof BenchSetupError) {
    console.error(`stead bench: ${e.message}`);
    process.exit(1);
  }
  console.error(e);
  process.exit(1);
});
