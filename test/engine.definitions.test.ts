/**
 * `Stead.run()` and `follow()` given two different definitions with one name refuse before
 * anything is written: a run created first could never be executed (every worker refuses the set).
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SteadError, workflow } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

/** The rows of the store's runs and events tables, read from the file (none when it was never migrated). */
function rowsOf(path: string): { runs: unknown[]; events: unknown[] } {
  const db = new Database(path, { readonly: true });
  try {
    const has = (t: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t) !== undefined;
    return {
      runs: has("runs") ? db.prepare("SELECT * FROM runs").all() : [],
      events: has("events") ? db.prepare("SELECT * FROM events").all() : [],
    };
  } finally {
    db.close();
  }
}

const one = workflow("dup-name", () => 1);
const other = workflow("dup-name", () => 2);
const child = workflow("dup-child", () => 3);

describe("definitions with a duplicate name", () => {
  it("run() refuses before start writes anything", async () => {
    const stead = h.create();
    const e = await caught(() => stead.run(one, null, { ...FAST_FOLLOW, definitions: [child, other] }));
    expect(rowsOf(stead.store.location)).toEqual({ runs: [], events: [] });
    expect(e).toBeInstanceOf(SteadError);
    expect((e as SteadError).code).toBe("STEAD_INVALID_DEFINITION");
    expect((e as SteadError).message).toBe('two of the given definitions are named "dup-name"');
  });

  it("follow() refuses before it claims or writes anything", async () => {
    const stead = h.create();
    const { id } = await stead.runs.start(one, null);
    const before = rowsOf(stead.store.location);
    const e = await caught(() => stead.runs.follow(id, [one, other], FAST_FOLLOW));
    expect((e as SteadError).message).toBe('two of the given definitions are named "dup-name"');
    expect(rowsOf(stead.store.location)).toEqual(before);
    expect((await stead.runs.get(id)).status).toBe("pending");
  });

  it("the same definition given twice is not a duplicate", async () => {
    const stead = h.create();
    const run = await stead.run(one, null, { ...FAST_FOLLOW, definitions: [one, child] });
    expect(run.status).toBe("completed");
  });
});
