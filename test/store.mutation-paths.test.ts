/**
 * Postgres commits a step's usual write by a statement of its own (postgres/step-commit.ts: one
 * step and at most one event with scalar parameters, else JSON arrays), every other write by
 * stead_commit_logged. On every shape the fast path accepts, both must leave the same rows and
 * events (the same stored event text) and give the same result, refusals included; and SQLite,
 * which has one path, must agree with them. Each case runs on three stores: Postgres fast,
 * Postgres general (a commit with `beforeCommit` always takes the general function), SQLite.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { simpleStepWrite, stepCommit } from "../src/store/postgres/step-commit.js";
import { SqliteStore } from "../src/store/sqlite/index.js";
import type { Mutation, Owner, Store, StepWrite, UnitResult } from "../src/store/types.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";
import { tempStorePath } from "./helpers/temp-store.js";

const OWNER: Owner = { workerId: "w1", host: "host-1", pid: 4242, start: "proc:424200" };
const LEASE = 60_000;

type Path = "postgres fast" | "postgres general" | "sqlite";

interface Seeded {
  fence: number;
}

interface Case {
  name: string;
  /** Runs after the run is created and claimed by OWNER; returns nothing or changes state first. */
  setup?: (store: Store, runId: string, fence: number) => Promise<void>;
  /** The write under test; `fence` is the claim's. */
  write: (runId: string, s: Seeded) => Mutation;
  /** No run is created: the write names a run that does not exist. */
  noRun?: boolean;
}

const step = (seq: number, stepId: string, over: Partial<StepWrite> = {}): StepWrite => ({
  seq,
  stepId,
  kind: "step",
  status: "completed",
  attempt: 1,
  output: JSON.stringify(stepId),
  startedAt: 1_000 + seq,
  completedAt: 2_000 + seq,
  ...over,
});

const lease = (fence: number, owner = OWNER.workerId) => ({ lease: { fence, owner } });

const CASES: Case[] = [
  {
    name: "a step and its event, lost claims already 0",
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 }, steps: [step(0, "a")], events: [{ type: "step.completed", data: { step: "a" } }] }),
  },
  {
    name: "lost claims back to 0 from 2 (the run row changes)",
    setup: async (store, runId, fence) => {
      await store.commit([[{ runId, expect: lease(fence), run: { lostClaims: 2 } }]]);
    },
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 }, steps: [step(0, "a")], events: [{ type: "step.completed" }] }),
  },
  {
    name: "lost claims set to a count other than 0",
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 1 }, steps: [step(0, "a")] }),
  },
  {
    name: "no run patch: lost claims left as they are",
    setup: async (store, runId, fence) => {
      await store.commit([[{ runId, expect: lease(fence), run: { lostClaims: 2 } }]]);
    },
    write: (runId, { fence }) => ({ runId, expect: lease(fence), steps: [step(0, "a")], events: [{ type: "step.completed" }] }),
  },
  {
    name: "an intent rewritten as its outcome: started_at kept, every other column the write's (checkpoint null when absent)",
    setup: async (store, runId, fence) => {
      await store.commit([[{ runId, expect: lease(fence), steps: [step(0, "e", { kind: "effect", status: "intent", output: null, completedAt: null, checkpoint: '{"k":"v"}' })] }]]);
    },
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 }, steps: [step(0, "e2", { kind: "tool", attempt: 2, startedAt: 9_999, error: '{"m":"x"}', output: null })] }),
  },
  {
    name: "several steps (with checkpoints) and several events, in order",
    write: (runId, { fence }) => ({
      runId,
      expect: lease(fence),
      run: { lostClaims: 0 },
      steps: [step(0, "a", { checkpoint: '{"at":"0"}' }), step(1, "b"), step(2, "c", { status: "failed", output: null, error: '{"message":"no"}' })],
      events: [{ type: "step.completed", data: { step: "a" } }, { type: "step.completed", data: { step: "b", n: [1, 2] } }, { type: "step.failed" }],
    }),
  },
  {
    name: "one step and an event whose data is nested, has nulls, and keys out of order",
    write: (runId, { fence }) => ({
      runId,
      expect: lease(fence),
      run: { lostClaims: 0 },
      steps: [step(0, "a", { error: '{"m":"x"}', checkpoint: '{"at":"0"}' })],
      events: [{ type: "step.completed", data: { z: 1, a: { y: [1, "two", null], b: true }, s: "é ✓ \"q\"" } }],
    }),
  },
  { name: "only events", write: (runId, { fence }) => ({ runId, expect: lease(fence), events: [{ type: "note", data: { x: "y" } }] }) },
  { name: "neither steps nor events", write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 } }) },
  {
    name: "a pause requested meanwhile: the result says so",
    setup: async (store, runId) => {
      await store.commit([[{ runId, expect: { status: ["running"] }, run: { pauseRequested: true } }]]);
    },
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 }, steps: [step(0, "a")] }),
  },
  { name: "refused: a stale fence", write: (runId, { fence }) => ({ runId, expect: lease(fence - 1), run: { lostClaims: 0 }, steps: [step(0, "a")], events: [{ type: "x" }] }) },
  { name: "refused: another owner", write: (runId, { fence }) => ({ runId, expect: lease(fence, "w2"), steps: [step(0, "a")], events: [{ type: "x" }] }) },
  {
    name: "refused: the run is no longer running",
    setup: async (store, runId, fence) => {
      await store.commit([[{ runId, expect: lease(fence), run: { status: "waiting", releaseLease: true } }]]);
    },
    write: (runId, { fence }) => ({ runId, expect: lease(fence), run: { lostClaims: 0 }, steps: [step(0, "a")], events: [{ type: "x" }] }),
  },
  { name: "refused: no such run", noRun: true, write: (runId) => ({ runId, expect: lease(1), steps: [step(0, "a")], events: [{ type: "x" }] }) },
];

/** What a write left: its result, and the run's rows with the store's own clock readings left out. */
async function outcome(store: Store, runId: string, result: UnitResult, updatedBefore: number | undefined) {
  const run = await store.getRun(runId);
  const { updatedAt, createdAt: _c, leaseExpiresAt: _l, ...rest } = run ?? ({} as Record<string, never>);
  return {
    result,
    run: run ? { ...rest, touched: updatedAt !== updatedBefore } : undefined,
    journal: await store.journal(runId),
    events: (await store.events({ runId })).map((e) => ({ type: e.type, data: JSON.parse(e.data) as unknown })),
    eventText: (await store.events({ runId })).map((e) => e.data),
  };
}

describe("Postgres's step fast path and the general path agree, and SQLite with them", () => {
  const dbs: TestDatabase[] = [];
  const stores = new Map<Path, Store>();
  let removeFile: (() => void) | undefined;

  beforeAll(async () => {
    for (const path of ["postgres fast", "postgres general"] as const) {
      const db = await freshDatabase("mutation-paths");
      dbs.push(db);
      const store = new PostgresStore({ connectionString: db.url });
      await store.migrate();
      stores.set(path, store);
    }
    const t = tempStorePath();
    removeFile = t.remove;
    const lite = new SqliteStore({ path: t.path });
    await lite.migrate();
    stores.set("sqlite", lite);
  });

  afterAll(async () => {
    for (const s of stores.values()) await s.close();
    for (const d of dbs) await d.drop();
    removeFile?.();
  });

  async function apply(path: Path, c: Case, runId: string) {
    const store = stores.get(path) as Store;
    let fence = 1;
    if (!c.noRun) {
      await store.createRun({ id: runId, definition: "def-a", module: null, fingerprint: "fp", input: "{}", createdAt: Date.now() }, [{ type: "run.created" }]);
      const [claimed] = await store.claim({ owner: OWNER, definitions: ["def-a"], limit: 1, leaseMs: LEASE, now: Date.now(), runIds: [runId] });
      fence = claimed?.run.fence ?? 0;
      await c.setup?.(store, runId, fence);
    }
    const m = c.write(runId, { fence });
    // Hazard this guards: a case the fast path stopped accepting would compare the general path with itself.
    expect(simpleStepWrite([m]), "the fast path accepts this shape").toBeDefined();
    const before = (await store.getRun(runId))?.updatedAt;
    // A write stamps updated_at to the millisecond: one in the setup's millisecond would not show as touched.
    while (before !== undefined && Date.now() <= before) await new Promise((r) => setTimeout(r, 1));
    const [result] = path === "postgres general" ? await store.commit([[m]], { beforeCommit: () => undefined }) : await store.commit([[m]]);
    return outcome(store, runId, result as UnitResult, before);
  }

  it.each(CASES.map((c, i) => [c.name, c, i] as const))("%s", async (_name, c, i) => {
    const runId = `r${i}`;
    const fast = await apply("postgres fast", c, runId);
    const general = await apply("postgres general", c, runId);
    const lite = await apply("sqlite", c, runId);
    expect(fast).toEqual(general);
    // SQLite keeps the text it was given; Postgres's paths both store it as jsonb renders it.
    expect({ ...lite, eventText: [] }).toEqual({ ...general, eventText: [] });
  });

  it("tries both of the fast path's statements", () => {
    const names = new Set(CASES.map((c) => stepCommit(simpleStepWrite([c.write("r", { fence: 1 })])!, "token").name));
    expect([...names].sort()).toEqual(["stead_one_step_commit", "stead_step_commit"]);
  });
});
