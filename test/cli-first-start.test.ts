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
import { requireBuild, ROOT, spawnCli, tempDir } from "./cli-helpers.js";

const FIXTURE = join(ROOT, "test", "fixtures", "first-start.mjs");
const ROUNDS = 6;
const PROCESSES = 4;

beforeAll(() => requireBuild());

it(`${ROUNDS} rounds of ${PROCESSES} \`stead run\` started at once on a fresh store: all succeed and the store is sound`, async () => {
  for (let round = 1; round <= ROUNDS; round++) {
    const dir = tempDir("stead-first-start-");
    try {
      const procs = Array.from({ length: PROCESSES }, (_, i) => spawnCli(["run", FIXTURE, "--input", String(i)], dir));
      const results = await Promise.all(procs.map((p) => p.done));
      for (const r of results) {
        expect({ round, code: r.code, stderr: r.stderr }).toEqual({ round, code: 0, stderr: "" });
      }
      expect(readdirSync(join(dir, ".stead")).filter((f) => !f.endsWith("-wal") && !f.endsWith("-shm"))).toEqual(["stead.db"]);
      const db = new Database(join(dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
      try {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
        expect(db.prepare("SELECT key FROM stead_meta").all()).toEqual([{ key: "marker" }]);
        expect(db.prepare("SELECT version FROM stead_migrations ORDER BY version").all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
        expect(MIGRATIONS.at(-1)?.version).toBe(LATEST_VERSION);
        const runs = db.prepare("SELECT status, input, output FROM runs ORDER BY input").all();
        expect(runs).toEqual([0, 1, 2, 3].map((i) => ({ status: "completed", input: String(i), output: String(i) })));
        const steps = db.prepare("SELECT step_id, status FROM steps").all();
        expect(steps).toEqual(Array.from({ length: PROCESSES }, () => ({ step_id: "echo", status: "completed" })));
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
