/**
 * Encryption at rest, on against off, in the same run on the same disk (and the same Postgres
 * server): W1 and W2 per step, and the bytes a 1 KB step takes in the store.
 *
 * Each ratio is the median of back-to-back pairs whose order alternates (off then on, on then
 * off), so drift in disk speed, and the garbage a run leaves for the next to collect, fall on both
 * sides alike. Each side gets a fresh store file (database).
 */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { withClient } from "../test/setup/databases.js";
import type { Store } from "../src/index.js";
import { cipher, stead as lib, stores } from "./lib.js";
import type { BenchServer } from "./pg-server.js";
import { rawCommitsOf } from "./raw-sqlite.js";
import { fmt, median, noisy, printTable, stepResult, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { steadSequential } from "./w1-sequential.js";
import { steadConcurrent } from "./w2-concurrent.js";

const W1_STEPS = 1000;
const W1_PAIRS = 8;
const W2_RUNS = 50;
const W2_STEPS = 100;
const W2_PAIRS = 6;
const TARGET = 1.1;
/** About the stored length of a sealed 1 KB output (base64 of its ciphertext). */
const SEALED_CHARS = 1400;
const RAW_ROWS = 1000;
const SEALS = 5000;
const SEAL_BATCHES = 7;
const RAW_PAIRS = 6;

const list = (xs: readonly number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(" / ");

/** A key held in memory (no file): the bench measures sealing, not key loading. */
const encryption = (keyDir: string) => ({ key: lib.localKey(randomBytes(32), "the bench's key"), keyDir });

interface Side {
  usPerStep: number;
  /** Stored bytes of one step's output (the ~1 KB JSON), and of the whole store per step. */
  outputBytes: number;
  storeBytes: number;
}

async function sqliteW1(on: boolean): Promise<Side> {
  return inScratch(on ? "enc-on" : "enc-off", async (d) => {
    const path = join(d, "stead.db");
    const r = await steadSequential(path, W1_STEPS, on ? { encryption: encryption(d) } : {});
    const db = new Database(path);
    try {
      db.pragma("wal_checkpoint(TRUNCATE)");
      const out = db.prepare("SELECT avg(length(CAST(output AS BLOB))) AS b FROM steps WHERE step_id LIKE 's-%'").get() as { b: number };
      return { usPerStep: r.usPerStep, outputBytes: out.b, storeBytes: statSync(path).size / W1_STEPS };
    } finally {
      db.close();
    }
  });
}

async function pgW1(server: BenchServer, on: boolean): Promise<Side> {
  return server.withDatabase(on ? "enc_on" : "enc_off", async (db) =>
    inScratch("pg-keys", async (d) => {
      const r = await steadSequential(db.url, W1_STEPS, on ? { encryption: encryption(d) } : {});
      const sizes = await withClient(db.url, async (c) => {
        const out = (await c.query<{ b: string }>("SELECT avg(pg_column_size(output))::float8::text AS b FROM steps WHERE step_id LIKE 's-%'")).rows[0];
        const total = (await c.query<{ b: string }>("SELECT pg_total_relation_size('steps')::text AS b")).rows[0];
        return { outputBytes: Number(out?.b ?? NaN), storeBytes: Number(total?.b ?? NaN) / W1_STEPS };
      });
      return { usPerStep: r.usPerStep, ...sizes };
    }),
  );
}

/** `n` back-to-back pairs of `run(false)` and `run(true)`, the first of each pair alternating. */
async function pairs<T>(run: (on: boolean) => Promise<T>, n: number): Promise<{ off: T[]; on: T[] }> {
  const off: T[] = [];
  const on: T[] = [];
  for (let i = 0; i < n; i++) {
    const offFirst = i % 2 === 0;
    const a = await run(!offFirst);
    const b = await run(offFirst);
    off.push(offFirst ? a : b);
    on.push(offFirst ? b : a);
  }
  return { off, on };
}

interface Compared {
  off: Side[];
  on: Side[];
  /** Per pair: time per step on / off. */
  ratios: number[];
}

async function w1Pairs(run: (on: boolean) => Promise<Side>): Promise<Compared> {
  const { off, on } = await pairs(run, W1_PAIRS);
  return { off, on, ratios: on.map((e, i) => e.usPerStep / (off[i]?.usPerStep ?? NaN)) };
}

/** Per pair, steps/s off / on: the cost of encryption as W1's ratios state it. */
async function w2Pairs(store: (label: string, fn: (where: string, dir: string) => Promise<number>) => Promise<number>): Promise<{ off: number[]; on: number[]; ratios: number[] }> {
  const { off, on } = await pairs(
    (enc) =>
      enc
        ? store("w2-on", async (where, dir) => (await steadConcurrent(where, W2_RUNS, W2_STEPS, encryption(dir))).stepsPerSec)
        : store("w2-off", async (where) => (await steadConcurrent(where, W2_RUNS, W2_STEPS)).stepsPerSec),
    W2_PAIRS,
  );
  return { off, on, ratios: off.map((o, i) => o / (on[i] ?? NaN)) };
}

/**
 * The disk's own price for ciphertext: raw autocommits of text and of random bytes of one length
 * (SEALED_CHARS), in alternating pairs. Storage that compresses or dedupes (as some virtual disks
 * do) writes incompressible pages more slowly, a cost any encryption pays there and one a W1 ratio
 * cannot tell from Stead's own.
 */
async function incompressibleCost(): Promise<{ text: number[]; random: number[]; ratios: number[] }> {
  const text = (i: number) => JSON.stringify(stepResult(i)).repeat(2).slice(0, SEALED_CHARS);
  const random = () => randomBytes(SEALED_CHARS).toString("base64").slice(0, SEALED_CHARS);
  const { off, on } = await pairs((rnd) => inScratch(rnd ? "raw-random" : "raw-text", (d) => rawCommitsOf(d, RAW_ROWS, rnd ? random : text)), RAW_PAIRS);
  return { text: off, random: on, ratios: on.map((r, i) => r / (off[i] ?? NaN)) };
}

/**
 * Stead's own sealing of one step's 1 KB output, in a loop with nothing else (code and tables hot
 * in the CPU's caches): the least any step of an encrypted store pays, beside W2's time per step.
 * Median of batches, each the mean of SEALS seals.
 */
function sealUs(): number {
  const dk = { id: "dk-bench", key: randomBytes(32) };
  const plain = JSON.stringify(stepResult(1));
  const batches: number[] = [];
  for (let b = 0; b < SEAL_BATCHES; b++) {
    const t0 = performance.now();
    for (let i = 0; i < SEALS; i++) cipher.sealText(dk, plain, `steps|run-bench|${i}|output`);
    batches.push(((performance.now() - t0) * 1000) / SEALS);
  }
  return median(batches);
}

/**
 * A plain store that, before each commit, seals every step output the commit carries and throws
 * the ciphertext away: the cipher's cost where a step pays it (between two commits, its code cold
 * in the CPU's caches), and nothing else of encryption (no layer, no bytes stored).
 */
function sealingPlainStore(path: string): Store {
  const store = stores.openSqliteStore({ path });
  const dk = { id: "dk-bench", key: randomBytes(32) };
  const commit = store.commit.bind(store);
  store.commit = (units, options) => {
    for (const u of units)
      for (const m of u) for (const st of m.steps ?? []) if (typeof st.output === "string") cipher.sealText(dk, st.output, `steps|${m.runId}|${st.seq}|output`);
    return commit(units, options);
  };
  return store;
}

/** W1 (µs/step) and W2 (steps/s) plain, against plain with each step's seal thrown away; in pairs as above. */
async function discardedSeals(): Promise<{ w1: { off: number[]; on: number[] }; w2: { off: number[]; on: number[] } }> {
  const at = (sealing: boolean, d: string) => (sealing ? sealingPlainStore(join(d, "stead.db")) : join(d, "stead.db"));
  const w1 = await pairs((sealing) => inScratch("seal-w1", async (d) => (await steadSequential(at(sealing, d), W1_STEPS)).usPerStep), W1_PAIRS);
  const w2 = await pairs((sealing) => inScratch("seal-w2", async (d) => (await steadConcurrent(at(sealing, d), W2_RUNS, W2_STEPS)).stepsPerSec), W2_PAIRS);
  return { w1, w2 };
}

function discardedRows(label: string, d: Awaited<ReturnType<typeof discardedSeals>>): Row[] {
  const w1 = d.w1.on.map((x, i) => x / (d.w1.off[i] ?? NaN));
  const w2 = d.w2.off.map((x, i) => x / (d.w2.on[i] ?? NaN));
  return [
    { name: `${label} W1 plain, one seal per step thrown away: / plain`, value: `${fmt(median(w1), 2)}x`, target: "", pass: null, note: noisy(w1) ?? `${fmt(median(d.w1.on) - median(d.w1.off))} µs/step of the cipher alone` },
    { name: `${label} W2 the same: plain / plain with seals thrown away`, value: `${fmt(median(w2), 2)}x`, target: "", pass: null, note: noisy(w2) },
  ];
}

/** Rows for the floor the cipher sets: one seal against the target's share of W2's step. */
function sealRows(label: string, w2OffStepsPerSec: number): Row[] {
  const seal = sealUs();
  const stepUs = 1e6 / w2OffStepsPerSec;
  return [
    { name: `${label} one 1 KB seal alone (AES-256-GCM, node:crypto, hot)`, value: `${fmt(seal, 1)} µs`, target: "", pass: null },
    {
      name: "  that seal against W2's step with encryption off",
      value: `${fmt((seal / stepUs) * 100, 0)}%`,
      target: "",
      pass: null,
      note: `${fmt(stepUs, 1)} µs/step: the ${fmt((TARGET - 1) * 100, 0)}% budget is ${fmt(stepUs * (TARGET - 1), 1)} µs`,
    },
  ];
}

function rows(label: string, w1: Compared, w2: { off: number[]; on: number[]; ratios: number[] }): Row[] {
  const ratio = median(w1.ratios);
  const w2Ratio = median(w2.ratios);
  return [
    { name: `${label} W1 encryption off`, value: `${fmt(median(w1.off.map((s) => s.usPerStep)))} µs/step`, target: "", pass: null },
    { name: `${label} W1 encryption on`, value: `${fmt(median(w1.on.map((s) => s.usPerStep)))} µs/step`, target: "", pass: null },
    { name: `${label} W1 cost: on / off (median of pairs)`, value: `${fmt(ratio, 2)}x`, target: `<= ${fmt(TARGET, 2)}x`, pass: ratio <= TARGET, note: noisy(w1.ratios) },
    { name: `${label} W2 steps/s off / on (medians)`, value: `${fmt(median(w2.off))} / ${fmt(median(w2.on))}`, target: "", pass: null },
    { name: `${label} W2 cost: off / on (median of pairs)`, value: `${fmt(w2Ratio, 2)}x`, target: `<= ${fmt(TARGET, 2)}x`, pass: w2Ratio <= TARGET, note: noisy(w2.ratios) },
    { name: `${label} bytes of a 1 KB step's output, off / on`, value: `${fmt(median(w1.off.map((s) => s.outputBytes)))} / ${fmt(median(w1.on.map((s) => s.outputBytes)))}`, target: "", pass: null },
    { name: `${label} store bytes per step, off / on`, value: `${fmt(median(w1.off.map((s) => s.storeBytes)))} / ${fmt(median(w1.on.map((s) => s.storeBytes)))}`, target: "", pass: null },
  ];
}

export async function encryptionSuite(server: BenchServer | undefined): Promise<void> {
  console.log(`Encryption at rest (AES-256-GCM), on against off; SQLite under ${tmpdir()}${server ? `, Postgres on ${server.description}` : ""}\n`);
  const sqlite1 = await w1Pairs(sqliteW1);
  console.log(`SQLite W1 ${W1_PAIRS} pairs of 1 run x ${W1_STEPS} steps: off ${list(sqlite1.off.map((s) => s.usPerStep))} µs/step; on ${list(sqlite1.on.map((s) => s.usPerStep))}; ratios ${list(sqlite1.ratios, 2)}`);
  const sqlite2 = await w2Pairs((label, fn) => inScratch(label, (d) => fn(join(d, "stead.db"), d)));
  console.log(`SQLite W2 ${W2_PAIRS} pairs of ${W2_RUNS} runs x ${W2_STEPS} steps: off ${list(sqlite2.off)} steps/s; on ${list(sqlite2.on)}; ratios ${list(sqlite2.ratios, 2)}`);
  const discarded = await discardedSeals();
  console.log(`SQLite plain against plain with each step's seal thrown away: W1 ${list(discarded.w1.off)} / ${list(discarded.w1.on)} µs/step; W2 ${list(discarded.w2.off)} / ${list(discarded.w2.on)} steps/s`);
  const raw = await incompressibleCost();
  console.log(`SQLite raw autocommits of ${SEALED_CHARS} chars, ${RAW_PAIRS} pairs of ${RAW_ROWS}: text ${list(raw.text)} µs; random ${list(raw.random)}; ratios ${list(raw.ratios, 2)}`);
  const table = rows("SQLite", sqlite1, sqlite2);
  table.push(...discardedRows("SQLite", discarded), ...sealRows("SQLite", median(sqlite2.off)));
  const rawRatio = median(raw.ratios);
  table.push(
    { name: `SQLite raw commit of ${SEALED_CHARS} chars, text / random (the disk, no Stead)`, value: `${fmt(median(raw.text))} / ${fmt(median(raw.random))} µs`, target: "", pass: null },
    {
      name: "  the disk's own cost of incompressible bytes: random / text",
      value: `${fmt(rawRatio, 2)}x`,
      target: "",
      pass: null,
      note: noisy(raw.ratios) ?? `${fmt(median(raw.random) - median(raw.text))} µs of W1's on - off is this disk's, not Stead's`,
    },
  );
  if (server) {
    const pg1 = await w1Pairs((on) => pgW1(server, on));
    console.log(`Postgres W1 ${W1_PAIRS} pairs: off ${list(pg1.off.map((s) => s.usPerStep))} µs/step; on ${list(pg1.on.map((s) => s.usPerStep))}; ratios ${list(pg1.ratios, 2)}`);
    const pg2 = await w2Pairs((label, fn) => server.withDatabase(label.replace("-", "_"), (db) => inScratch("pg-keys", (d) => fn(db.url, d))));
    console.log(`Postgres W2 ${W2_PAIRS} pairs of ${W2_RUNS} runs x ${W2_STEPS} steps: off ${list(pg2.off)} steps/s; on ${list(pg2.on)}; ratios ${list(pg2.ratios, 2)}`);
    table.push(...rows("Postgres", pg1, pg2));
  }
  console.log("");
  printTable(table);
}
