/**
 * mutation/plan.ts is the order and the set of a mutation's checks and writes. SQLite applies a
 * mutation by iterating it (checked here by driving its applier with a recording fake: every phase
 * of a mutation that asks for all of them, in the plan's order). Postgres's stead_apply_mutation is
 * rendered from it (postgres/mutation-function.ts, installed by migrations 6 and 12): the installed
 * function is read back and found to be that rendering, its checks and writes in the plan's order.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type Database from "better-sqlite3";
import { CHECKS, WRITES, type WriteName } from "../src/store/mutation/plan.js";
import { mutationApplier, PreconditionFailed, type SqliteWrites } from "../src/store/sqlite/apply-mutation.js";
import { PostgresStore } from "../src/store/postgres/index.js";
import { LATEST_VERSION } from "../src/store/postgres/migrations.js";
import { applyMutationBody } from "../src/store/postgres/mutation-function.js";
import type { Mutation } from "../src/store/types.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

/** A mutation that asks for every check and every write. */
const EVERYTHING: Mutation = {
  runId: "r1",
  expect: { lease: { fence: 3, owner: "w1" }, status: ["running"], openWait: "w", openHold: 7 },
  idempotency: { verb: "approve", scope: "r1", key: "k", digest: "d", summary: "s", result: "{}", actor: null, ttlMs: 1_000 },
  run: { status: "pending", lostClaims: 0 },
  deleteStepsFrom: 2,
  steps: [{ seq: 2, stepId: "a", kind: "step", status: "completed", attempt: 1, output: "1", startedAt: 1, completedAt: 2 }],
  snapshots: [{ seq: 2, stepId: "a", source: "step", root: "h", files: 1, bytes: 1, filesChanged: 1, newBytes: 1, notes: null, checkpoint: null, createdAt: 1 }],
  waits: [{ name: "w2", kind: "signal", seq: 3 }],
  reopenWaits: ["w3"],
  resolveWaits: [{ name: "w", status: "resolved", result: "1" }],
  holds: [{ kind: "ambiguous_effect", reason: "x", details: "{}" }],
  releaseHolds: [{ id: 7, choice: "retry" }],
  newRuns: [{ id: "c1", definition: "d", module: null, fingerprint: null, input: "{}", createdAt: 1 }],
  events: [{ type: "run.resumed" }],
  deleteEvents: { type: "model.delta", step: "model-1", attempt: 1 },
};

describe("the plan", () => {
  it("names each refusal once, with its own SQLSTATE, and each write once", () => {
    expect(new Set(CHECKS.map((c) => c.reason)).size).toBe(CHECKS.length);
    expect(new Set(CHECKS.map((c) => c.sqlstate)).size).toBe(CHECKS.length);
    expect(new Set(WRITES.map((w) => w.name)).size).toBe(WRITES.length);
  });

  it("has a mutation that asks for every phase (the fixture below is complete)", () => {
    expect(CHECKS.filter((c) => !c.applies(EVERYTHING)).map((c) => c.name)).toEqual([]);
    expect(WRITES.filter((w) => !w.applies(EVERYTHING)).map((w) => w.name)).toEqual([]);
  });
});

describe("SQLite's applier", () => {
  /** Which phase a statement or helper call belongs to, by its text. */
  const PHASE_OF: [RegExp, string][] = [
    [/^SELECT status, fence/, "check run"],
    [/^SELECT status FROM waits/, "check openWait"],
    [/^SELECT status FROM holds/, "check openHold"],
    [/^UPDATE runs SET/, "write run"],
    [/^DELETE FROM steps/, "write deleteStepsFrom"],
    [/^INSERT INTO waits/, "write waits"],
    [/^UPDATE waits SET status = 'open'/, "write reopenWaits"],
    [/^UPDATE waits SET status = \?/, "write resolveWaits"],
    [/^UPDATE steps SET status = 'completed'/, "write resolveWaits"],
    [/^INSERT INTO holds/, "write holds"],
    [/^UPDATE holds/, "write releaseHolds"],
    [/^SELECT 1 FROM runs/, "write newRuns"],
    [/^DELETE FROM events/, "write deleteEvents"],
  ];

  function recording(overrides: { row?: Record<string, unknown> | undefined; keyFree?: boolean } = {}): { writes: SqliteWrites; trace: string[] } {
    const trace: string[] = [];
    const note = (phase: string) => {
      if (trace[trace.length - 1] !== phase) trace.push(phase);
    };
    const row = "row" in overrides ? overrides.row : { status: "running", fence: 3, lease_owner: "w1", lost_claims: 2, pause_requested: 0 };
    const writes: SqliteWrites = {
      stmt: (sql) => {
        const phase = PHASE_OF.find(([re]) => re.test(sql.trim()))?.[1];
        if (!phase) throw new Error(`unexpected statement: ${sql}`);
        const run = () => {
          note(phase);
          return { changes: 1, lastInsertRowid: 0 };
        };
        const get = () => {
          note(phase);
          if (phase === "check run") return row;
          if (phase === "write newRuns") return undefined;
          return { status: "open" };
        };
        return { run, get } as unknown as Database.Statement;
      },
      recordKey: () => {
        note("check idempotency");
        return overrides.keyFree ?? true;
      },
      upsertSteps: () => note("write steps"),
      upsertSnapshots: () => note("write snapshots"),
      insertRun: () => note("write newRuns"),
      insertEvents: () => note("write events"),
    };
    return { writes, trace };
  }

  // The lease and status checks read nothing of their own: they judge the row the run check read.
  const PLAN_TRACE = [
    ...CHECKS.filter((c) => c.name !== "lease" && c.name !== "status").map((c) => `check ${c.name}`),
    ...WRITES.map((w) => `write ${w.name}`),
  ];

  it("runs every phase a mutation asks for, in the plan's order", () => {
    const { writes, trace } = recording();
    mutationApplier(writes)(EVERYTHING, 10);
    expect(trace).toEqual(PLAN_TRACE);
  });

  it("stops at the first check that fails, with its refusal, and writes nothing", () => {
    const refusal = (over: Parameters<typeof recording>[0], m: Mutation = EVERYTHING) => {
      const { writes, trace } = recording(over);
      try {
        mutationApplier(writes)(m, 10);
      } catch (e) {
        if (!(e instanceof PreconditionFailed)) throw e;
        expect(trace.filter((t) => t.startsWith("write"))).toEqual([]);
        return e.result;
      }
      throw new Error("no refusal");
    };
    expect(refusal({ row: undefined })).toEqual({ ok: false, reason: "missing", runId: "r1" });
    expect(refusal({}, { ...EVERYTHING, expect: { ...EVERYTHING.expect, lease: { fence: 4, owner: "w1" } } })).toEqual({ ok: false, reason: "lease", runId: "r1", status: "running" });
    expect(refusal({}, { ...EVERYTHING, expect: { ...EVERYTHING.expect, status: ["pending"] } })).toEqual({ ok: false, reason: "status", runId: "r1", status: "running" });
    expect(refusal({ keyFree: false })).toEqual({ ok: false, reason: "idempotency", runId: "r1", status: "running" });
  });
});

describe("Postgres's installed stead_apply_mutation", () => {
  let db: TestDatabase;
  const source = new Map<string, string>();

  beforeAll(async () => {
    db = await freshDatabase("mutation-plan");
    const store = new PostgresStore({ connectionString: db.url });
    await store.migrate();
    await store.close();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const rows = (await client.query("SELECT proname, prosrc FROM pg_proc WHERE proname IN ('stead_apply_mutation', 'stead_apply_workspace', 'stead_commit')")).rows as { proname: string; prosrc: string }[];
      for (const r of rows) source.set(r.proname, r.prosrc);
    } finally {
      await client.end();
    }
  });
  afterAll(() => db.drop());

  const text = (fn: string): string => {
    const s = source.get(fn);
    if (s === undefined) throw new Error(`${fn} is not installed`);
    return s;
  };

  /** Where the function spells a write (once each). */
  const marker = (name: WriteName): string => `-- write ${name}\n    IF m ? '${name}' THEN`;

  it("is the function mutation-function.ts renders from the plan, as of the latest version", () => {
    expect(text("stead_apply_mutation")).toBe(applyMutationBody(LATEST_VERSION));
  });

  it("returns each check's refusal, as SQLite's applier reports it, in the plan's order", () => {
    const fn = text("stead_apply_mutation");
    const at = CHECKS.map((c) => {
      const refuse = `RETURN jsonb_build_object('ok', false, 'reason', '${c.reason}', 'runId', rid${c.reportsStatus ? ", 'status', cur.status" : ""});`;
      expect(fn, refuse).toContain(refuse);
      expect(fn.indexOf(refuse), `${refuse} once`).toBe(fn.lastIndexOf(refuse));
      return fn.indexOf(refuse);
    });
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(fn).not.toContain("RAISE");
  });

  it("writes every phase inside the mutation, in the plan's order", () => {
    const fn = text("stead_apply_mutation");
    const at = WRITES.map((w) => {
      expect(fn, marker(w.name)).toContain(marker(w.name));
      expect(fn.indexOf(marker(w.name)), `${w.name} once`).toBe(fn.lastIndexOf(marker(w.name)));
      return fn.indexOf(marker(w.name));
    });
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(fn.indexOf(marker(WRITES[0].name))).toBeGreaterThan(fn.lastIndexOf("'ok', false"));
  });

  it("leaves nothing to stead_apply_workspace, which a worker of an earlier release still calls", () => {
    expect(text("stead_apply_workspace")).not.toMatch(/\b(INSERT|UPDATE|DELETE)\b/i);
  });
});
