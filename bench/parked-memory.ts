import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { distUrl, stead as lib } from "./lib.js";

const NAME = "bench-parked";
const VERSION = "bench-parked-1";

export const parked = lib.workflow(NAME, { version: VERSION }, async (ctx) => {
  await ctx.step("before", () => ({ body: "lorem ipsum dolor sit amet ".repeat(10) }));
  await ctx.approval("go", { why: "the bench parks every run here" });
  return "approved";
});

/**
 * A start by name needs the definition announced: a worker announces `parked`, then stops, so no
 * run executes while starts are timed.
 */
export async function announceParked(stead: ReturnType<typeof lib.createStead>): Promise<void> {
  const announcer = stead.worker({ definitions: [parked], pollMs: 20 });
  announcer.start();
  for (let tries = 0; (await stead.definitions.list({ name: parked.name })).length === 0; tries++) {
    if (tries > 500) throw new Error(`the worker did not announce ${parked.name} in 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await announcer.stop();
}

/** What a worker process holds after a forced GC, in bytes. */
export interface Footprint {
  rss: number;
  heapUsed: number;
  /** V8's young generation as committed (both semispaces): it grows under allocation and stays. */
  newSpace: number;
}

/**
 * A worker process on `store` serving the parked runs' definition: it starts `toPark` runs and
 * executes them to their approval, works for `settleMs` more (claim polls, a sweeper pass), then
 * reports its RSS and heap after a forced GC.
 */
async function workerFootprint(dir: string, store: string, settleMs: number, toPark = 0): Promise<Footprint> {
  const script = join(dir, "parked-worker.mjs");
  writeFileSync(
    script,
    `import { getHeapSpaceStatistics } from "node:v8";
import { createStead, workflow } from ${JSON.stringify(distUrl)};
const run = workflow(${JSON.stringify(NAME)}, { version: ${JSON.stringify(VERSION)} }, async (ctx) => {
  await ctx.step("before", () => ({ body: "lorem ipsum dolor sit amet ".repeat(10) }));
  await ctx.approval("go", { why: "the bench parks every run here" });
  return "approved";
});
const stead = createStead({ store: process.argv[2] });
const toPark = Number(process.argv[4] ?? 0);
let parked = 0;
let allParked;
const done = new Promise((r) => (allParked = r));
const worker = stead.worker({ definitions: [run], concurrency: 50 });
worker.on("error", (e) => { console.error(e); process.exit(2); });
worker.on("outcome", (_id, o) => {
  if (o.kind !== "waiting") { console.error("a run ended " + o.kind); process.exit(3); }
  if (++parked === toPark) allParked();
});
for (let i = 0; i < toPark; i++) await stead.runs.start(run, null);
worker.start();
if (toPark > 0) await done;
await new Promise((r) => setTimeout(r, Number(process.argv[3])));
for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); }
const m = process.memoryUsage();
const newSpace = getHeapSpaceStatistics().find((x) => x.space_name === "new_space")?.space_size ?? 0;
process.stdout.write(JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, newSpace }));
await worker.stop();
await stead.close();
`,
  );
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["--expose-gc", script, store, String(settleMs), String(toPark)], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", resolve);
  });
  if (code !== 0) throw new Error(`parked-runs worker exited ${code}: ${err}`);
  return JSON.parse(out) as Footprint;
}

/**
 * One run taken to its approval by a worker, then copied `count` times in the store's own tables
 * (every row of the run: its run, steps, waits and events, with the run id made unique), so the
 * seeded runs are what a parked run is, row for row.
 */
async function seedParked(store: string, count: number): Promise<void> {
  const stead = lib.createStead({ store });
  try {
    const { id } = await stead.runs.start(parked, null);
    const worker = stead.worker({ definitions: [parked], concurrency: 1, pollMs: 20 });
    worker.start();
    const deadline = Date.now() + 30_000;
    while ((await stead.runs.get(id)).status !== "waiting") {
      if (Date.now() > deadline) throw new Error(`the parked-runs template run ${id} did not reach its approval`);
      await new Promise((r) => setTimeout(r, 10));
    }
    await worker.stop();
  } finally {
    await stead.close();
  }
  const db = new Database(store);
  try {
    const template = (db.prepare("SELECT id FROM runs").get() as { id: string }).id;
    const copy = (table: string, idColumn: string, skip: readonly string[] = []) => {
      const cols = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name).filter((c) => !skip.includes(c));
      const select = cols.map((c) => (c === idColumn ? `t.${c} || '-' || n.i` : `t.${c}`)).join(", ");
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO ${table} (${cols.join(", ")}) SELECT ${select} FROM ${table} t, n WHERE t.${idColumn} = ?`,
      ).run(count, template);
    };
    db.transaction(() => {
      copy("runs", "id");
      copy("steps", "run_id");
      copy("waits", "run_id");
      copy("events", "run_id", ["seq"]);
    })();
    const waiting = (db.prepare("SELECT count(*) AS n FROM waits WHERE status = 'open'").get() as { n: number }).n;
    if (waiting !== count + 1) throw new Error(`seeded ${waiting} open waits, expected ${count + 1}`);
  } finally {
    db.close();
  }
}

/** A worker's footprint on a store of `count` parked runs seeded in bulk, and on an empty store. */
export async function parkedFootprint(dir: string, count: number, settleMs = 3_000): Promise<{ idle: Footprint; seeded: Footprint }> {
  const empty = join(dir, "empty.db");
  const s = lib.createStead({ store: empty });
  await s.ready();
  await s.close();
  const idle = await workerFootprint(dir, empty, settleMs);
  const full = join(dir, "parked.db");
  await seedParked(full, count);
  return { idle, seeded: await workerFootprint(dir, full, settleMs) };
}

/** A worker's footprint after it has itself executed `count` runs to their approval, on a fresh store. */
export async function executedFootprint(dir: string, count: number, settleMs = 3_000): Promise<Footprint> {
  return workerFootprint(dir, join(dir, "executed.db"), settleMs, count);
}
