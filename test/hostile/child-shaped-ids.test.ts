/**
 * A child run's id is `<parent id>.<step id>`. An id a caller chooses in that shape (a start, a
 * start by name or a fork with `--id P.kid`) used to create the child's run before its parent
 * did: the parent then "created" it (an existing id is a retry of the same creation), waited for
 * ever on an unrelated run, and `why` said it waited for that run to end although it had ended.
 * Such ids are refused, through the library and the CLI, and nothing is written; a run that already
 * holds one (made before the refusal) is never adopted as a child: its would-be parent fails,
 * naming it. On both stores.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SteadError, openStore, workflow, type Worker } from "../../src/index.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { FAST_WORKER } from "../helpers/temp-store.js";
import { caught, waitUntil } from "../helpers/waiting.js";

const FIXTURE = join(ROOT, "test", "fixtures", "hostile", "children.ts");

const kid = workflow("hostile-kid", async (ctx, n: number) => ctx.step("double", () => n * 2));
const parent = workflow("hostile-parent", async (ctx) => {
  await ctx.approval("gate");
  return ctx.child("kid", kid, 21);
});
const WAIT = { timeoutMs: 30_000, pollMs: 20 } as const;

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("run ids shaped like a child's, on %s", (kind) => {
  let s: OnStore;
  let w: Worker | undefined;
  afterEach(async () => {
    await w?.stop({ graceMs: 500 });
    w = undefined;
    await s.cleanup();
  });

  /** Every run id and the number of events, read from the database. */
  async function written(): Promise<{ runs: string[]; events: number }> {
    const runs = (await s.rows("SELECT id FROM runs ORDER BY id")).map((r) => String(r.id));
    const [events] = await s.rows("SELECT COUNT(*) AS n FROM events");
    return { runs, events: Number(events?.n) };
  }

  /** A parent `p1` waiting at its gate, with a worker serving the parent and the child (which announces them). */
  async function parked(label: string): Promise<void> {
    s = await onStore(kind, label);
    w = s.stead.worker({ definitions: [parent, kid], ...FAST_WORKER });
    w.start();
    await s.stead.runs.start(parent, null, { id: "p1" });
    await s.stead.runs.waitFor("p1", { ...WAIT, until: (r) => r.status === "waiting" });
  }

  it("start, start by name and fork refuse `p1.kid` with STEAD_BAD_ID and a fix, write nothing, and the parent then makes its own child", async () => {
    await parked("child-ids-lib");
    const before = await written();
    const refusals = [
      await caught(() => s.stead.runs.start(kid, 1, { id: "p1.kid" })),
      await caught(() => s.stead.runs.startByName("hostile-kid", 1, { id: "p1.kid" })),
      await caught(() => s.stead.runs.fork("p1", { id: "p1.kid" })),
    ];
    for (const e of refusals) {
      expect(e).toBeInstanceOf(SteadError);
      expect(e).toMatchObject({ code: "STEAD_BAD_ID" });
      expect((e as SteadError).message).toContain("p1.kid");
      expect(String((e as SteadError).details.fix)).toMatch(/'\.'/);
    }
    expect(await written()).toEqual(before);

    await s.stead.runs.approve("p1", "gate");
    const done = await s.stead.runs.waitFor("p1", WAIT);
    expect(done).toMatchObject({ status: "completed", output: 42 });
    const [child] = await s.rows("SELECT parent_id, parent_step_id, status FROM runs WHERE id = ?", "p1.kid");
    expect(child).toEqual({ parent_id: "p1", parent_step_id: "kid", status: "completed" });
  });

  it("the CLI refuses `--id p1.kid` for start, run and fork: exit 2, the code and the fix on stderr, nothing written", async () => {
    await parked("child-ids-cli");
    const before = await written();
    const store = ["--store", s.location];
    const runs = [
      await cli(["start", "hostile-kid", "--input", "1", "--id", "p1.kid", ...store], ROOT),
      await cli(["run", FIXTURE, "--workflow", "kid", "--input", "1", "--id", "p1.kid", ...store], ROOT),
      await cli(["fork", "p1", "--id", "p1.kid", ...store], ROOT),
    ];
    for (const r of runs) {
      expect(r.stderr).toContain('run id "p1.kid" holds \'.\'');
      expect(r.stderr).toMatch(/ — choose an id without '\.'/);
      expect(r.code, r.stderr).toBe(2);
    }
    const json = await cli(["start", "hostile-kid", "--input", "1", "--id", "p1.kid", "--json", ...store], ROOT);
    expect(json.code).toBe(2);
    const { error } = JSON.parse(json.stderr) as { error: { code: string; fix: string } };
    expect(error.code).toBe("STEAD_BAD_ID");
    expect(error.fix).toContain("'.'");
    expect(await written()).toEqual(before);
  });

  it("a run that already holds the child's id is not adopted: the parent fails with STEAD_ID_TAKEN naming it, and why says so", async () => {
    await parked("child-ids-adopt");
    // As a store written before the refusal may hold it: a run of the child's definition with the child's id and no parent.
    const raw = openStore(s.location);
    try {
      await raw.createRun({ id: "p1.kid", definition: "hostile-kid", module: null, fingerprint: null, input: "5", createdAt: Date.now() }, [{ type: "run.created", data: {} }]);
    } finally {
      await raw.close();
    }
    expect(await s.stead.runs.waitFor("p1.kid", WAIT)).toMatchObject({ status: "completed", output: 10 });

    await s.stead.runs.approve("p1", "gate");
    // Ended, or parked on its child: the old code parked it there for ever.
    const after = await waitUntil("p1 to end or to wait on its child", async () => {
      const r = await s.stead.runs.get("p1");
      if (r.status === "completed" || r.status === "failed") return r;
      const onChild = await s.rows("SELECT name FROM waits WHERE run_id = ? AND kind = 'child'", "p1");
      return r.status === "waiting" && onChild.length > 0 ? r : undefined;
    }, WAIT);
    expect(after.status).toBe("failed");
    expect(after.error).toMatchObject({ code: "STEAD_ID_TAKEN" });
    expect(after.error?.message).toContain("p1.kid");
    const why = await s.stead.runs.why("p1");
    expect(why.text).toContain("p1.kid");
    expect(why.text).not.toMatch(/child run p1\.kid to end/);
    // The other run is left as it was: not made a child, its output untouched.
    const [other] = await s.rows("SELECT parent_id, status FROM runs WHERE id = ?", "p1.kid");
    expect(other).toEqual({ parent_id: null, status: "completed" });
    expect(await s.rows("SELECT name FROM waits WHERE run_id = ? AND kind = 'child'", "p1")).toEqual([]);
  });
});
