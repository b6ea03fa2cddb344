/**
 * Starts asked for together share one durable commit on SQLite, counted where the disk sees it:
 * the commit frames of the WAL file (a frame whose header gives the database's size in pages ends
 * a transaction). One start refused among them (its id taken) is refused alone. And opening a
 * store takes no write lock when its schema is current, so a process starts while another holds it.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SteadError } from "../src/errors.js";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { newRun } from "../src/store/conformance/fixtures.js";
import { tempStorePath } from "./helpers/temp-store.js";
import { resetWal, walCommits } from "./helpers/wal-commits.js";

describe("SQLite starts", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("twenty starts asked for at once are one commit; a refused one among them does not stop the rest", async () => {
    const t = tempStorePath();
    cleanups.push(() => t.remove());
    const store = new SqliteStore({ path: t.path });
    cleanups.push(() => store.close());
    await store.migrate();
    await store.createRun(newRun("taken"), [{ type: "run.created" }]);
    resetWal(t.path);
    expect(walCommits(t.path)).toBe(0);

    const ids = Array.from({ length: 20 }, (_, i) => (i === 7 ? "taken" : `r${i}`));
    const results = await Promise.allSettled(ids.map((id) => store.createRun(newRun(id), [{ type: "run.created" }])));

    expect(walCommits(t.path)).toBe(1);
    expect(results.map((r) => r.status)).toEqual(ids.map((id) => (id === "taken" ? "rejected" : "fulfilled")));
    const refused = results[7];
    expect(refused?.status === "rejected" && refused.reason instanceof SteadError && refused.reason.code).toBe("STEAD_ID_TAKEN");
    const file = new Database(t.path, { readonly: true });
    try {
      const rows = file.prepare("SELECT id FROM runs ORDER BY id").all() as { id: string }[];
      expect(rows.map((r) => r.id).sort()).toEqual([...ids.filter((id) => id !== "taken"), "taken"].sort());
      const created = file.prepare("SELECT count(*) AS n FROM events WHERE type = 'run.created'").get() as { n: number };
      expect(created.n).toBe(20);
    } finally {
      file.close();
    }
  });

  it("a start the schema refuses fails alone: the starts asked for with it are written", async () => {
    const t = tempStorePath();
    cleanups.push(() => t.remove());
    const store = new SqliteStore({ path: t.path });
    cleanups.push(() => store.close());
    await store.migrate();
    const bad = { ...newRun("bad"), input: undefined as unknown as string };
    const results = await Promise.allSettled([store.createRun(newRun("a"), []), store.createRun(bad, []), store.createRun(newRun("b"), [])]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const file = new Database(t.path, { readonly: true });
    try {
      expect((file.prepare("SELECT id FROM runs ORDER BY id").all() as { id: string }[]).map((r) => r.id)).toEqual(["a", "b"]);
    } finally {
      file.close();
    }
  });

  it("a store at this Stead's schema opens while another connection holds the write lock", async () => {
    const t = tempStorePath();
    cleanups.push(() => t.remove());
    const first = new SqliteStore({ path: t.path });
    await first.migrate();
    await first.close();
    const holder = new Database(t.path);
    cleanups.push(() => holder.close());
    holder.exec("BEGIN IMMEDIATE");
    cleanups.push(() => holder.exec("ROLLBACK"));
    const store = new SqliteStore({ path: t.path, busyTimeoutMs: 100 });
    cleanups.push(() => store.close());
    await expect(store.migrate()).resolves.toBeUndefined();
  });
});
