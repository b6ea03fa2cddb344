/**
 * Several `stead run` processes started at once in a new directory: each finds no store, and all
 * of them create it. Creating the schema must be serialised across processes, so every one of them
 * succeeds and the store ends up with one marker, one row per migration and every run.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, expect, it } from "vitest";
import { LATEST_VERSION, MIGRATIONS } from "../src/store/sqlite/index.js";
import { readEffects } from "./fixtures/crash/harness.js";
import { requireBuild, ROOT, spawnCli, tempDir } from "./cli-helpers.js";

/** Plain JavaScript (no tsx to load), so the processes reach the store close together. */
const FIXTURE = join(ROOT, "test", "fixtures", "crash", "workflows.mjs");
const ROUNDS = 6;
const PROCESSES = 4;

beforeAll(() => requireBuild());

it(`${ROUNDS} rounds of ${PROCESSES} \`stead run\` started at once on a fresh store: all succeed and the store is sound`, async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    const dir = tempDir("stead-first-start-");
    try {
      const log = join(dir, "effects.log");
      const procs = Array.from({ length: PROCESSES }, (_, i) =>
        spawnCli(["run", FIXTURE, "--workflow", "plain", "--id", `r${i}`, "--input", JSON.stringify({ x: i })], dir, { env: { STEAD_TEST_LOG: log } }),
      );
      const results = await Promise.all(procs.map((p) => p.done));
      for (const r of results) {
        expect({ round, code: r.code, stderr: r.stderr }).toEqual({ round, code: 0, stderr: "" });
      }
      // The store, and the room its workers set aside for a full disk (one file, whoever made it first).
      expect(readdirSync(join(dir, ".stead")).filter((f) => !f.endsWith("-wal") && !f.endsWith("-shm")).sort()).toEqual(["stead.db", "stead.db-reserve"]);
      const db = new Database(join(dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
      try {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
        expect(db.prepare("SELECT key FROM stead_meta").all()).toEqual([{ key: "marker" }]);
        expect(db.prepare("SELECT version FROM stead_migrations ORDER BY version").all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
        expect(MIGRATIONS.at(-1)?.version).toBe(LATEST_VERSION);
        const runs = db.prepare("SELECT id, status, output FROM runs ORDER BY id").all();
        expect(runs).toEqual([0, 1, 2, 3].map((i) => ({ id: `r${i}`, status: "completed", output: JSON.stringify({ x: `x(${i})`, y: `y(x(${i}))`, b: `b(y(x(${i})))` }) })));
        const steps = db.prepare("SELECT run_id, step_id, status FROM steps ORDER BY run_id, seq").all();
        expect(steps).toEqual([0, 1, 2, 3].flatMap((i) => ["x", "y", "b"].map((step_id) => ({ run_id: `r${i}`, step_id, status: "completed" }))));
      } finally {
        db.close();
      }
      // Each step's effect happened once: no process ran a run twice.
      const effects = readEffects(log).map((l) => `${l.runId} ${l.stepId} ${l.attempt}`).sort();
      expect(effects).toEqual([0, 1, 2, 3].flatMap((i) => ["b", "x", "y"].map((st) => `r${i} ${st} 1`)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
