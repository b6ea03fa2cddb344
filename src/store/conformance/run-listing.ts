/**
 * Run listings (`RunReads.listRuns`, `countRuns`, `runActivity`, `completedStep`): every filter,
 * both sort keys in both orders with id breaking ties, keyset pages stable while runs are created
 * and changed between them, an id prefix taken literally, and refusals of malformed queries.
 *
 * Ids here are lowercase letters and digits of one length, so their order is the same under any
 * collation a Postgres database may have (the tie-breaker compares ids as the store does).
 */
import type { NewRun, RunQuery, RunRow, Store } from "../types.js";
import { DEF_B, newRun, step } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

/** The order a listing promises, computed here from the rows. */
function sorted(rows: RunRow[], sort: "createdAt" | "updatedAt", order: "asc" | "desc"): string[] {
  const s = [...rows].sort((a, b) => a[sort] - b[sort] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return (order === "asc" ? s : s.reverse()).map((r) => r.id);
}

export function describeRunListing(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { setStatus, commitOne } = h;
  describe("run listing", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    const make = (id: string, over: Partial<NewRun> = {}) => store.createRun(newRun(id, over), [{ type: "run.created", data: { id } }]);
    const ids = async (q: RunQuery) => (await store.listRuns(q)).runs.map((r) => r.id);
    /** Every page of a listing, and the runs in the order the pages gave them. */
    const walk = async (q: RunQuery, between?: (page: number) => Promise<void>) => {
      const seen: string[] = [];
      let pages = 0;
      for (let cursor: string | undefined; ; ) {
        const page = await store.listRuns({ ...q, ...(cursor === undefined ? {} : { cursor }) });
        pages++;
        seen.push(...page.runs.map((r) => r.id));
        if (page.nextCursor === null) return { seen, pages };
        expect(page.runs).toHaveLength(q.limit ?? 100);
        cursor = page.nextCursor;
        await between?.(pages);
      }
    };
    const every = async (): Promise<RunRow[]> => (await store.listRuns({ limit: 1000 })).runs;

    it("filters by status (one or several), definition, session, parent, created and updated ranges, and counts what it lists", async () => {
      await make("p01", { createdAt: 1_000 });
      await make("p02", { createdAt: 2_000, definition: DEF_B });
      await make("c01", { createdAt: 3_000, parentId: "p01", parentStepId: "a" });
      await make("c02", { createdAt: 4_000, parentId: "p01", parentStepId: "b", definition: DEF_B });
      await make("c03", { createdAt: 5_000, parentId: "p02", parentStepId: "a" });
      await make("t01", { createdAt: 6_000, sessionId: "s-1" });
      await make("t02", { createdAt: 7_000, sessionId: "s-1" });
      await make("t03", { createdAt: 8_000, sessionId: "s-2" });
      await setStatus("c02", "waiting");
      await setStatus("p02", "completed");
      await setStatus("t01", "held");
      const changed = (await store.getRun("c02"))?.updatedAt ?? 0;
      expect(changed).toBeGreaterThan(8_000);

      const cases: [RunQuery, string[]][] = [
        [{}, ["t03", "t02", "t01", "c03", "c02", "c01", "p02", "p01"]],
        [{ status: ["pending"] }, ["t03", "t02", "c03", "c01", "p01"]],
        [{ status: ["completed", "waiting", "held"] }, ["t01", "c02", "p02"]],
        [{ status: ["waiting", "waiting"] }, ["c02"]],
        [{ status: [] }, ["t03", "t02", "t01", "c03", "c02", "c01", "p02", "p01"]],
        [{ definition: DEF_B }, ["c02", "p02"]],
        [{ definition: "nobody" }, []],
        [{ sessionId: "s-1" }, ["t02", "t01"]],
        [{ parentId: "p01" }, ["c02", "c01"]],
        [{ parentId: "p01", status: ["pending", "held"] }, ["c01"]],
        [{ createdSince: 3_000, createdBefore: 6_000 }, ["c03", "c02", "c01"]],
        [{ createdSince: 7_000 }, ["t03", "t02"]],
        [{ createdBefore: 1_001 }, ["p01"]],
        [{ updatedSince: 8_001 }, ["t01", "c02", "p02"]],
        [{ updatedBefore: 2_001 }, ["p01"]],
        [{ updatedSince: changed, updatedBefore: changed + 1, status: ["waiting"] }, ["c02"]],
        [{ definition: DEF_B, status: ["completed"], createdSince: 2_000 }, ["p02"]],
      ];
      for (const [q, want] of cases) {
        expect({ q, got: await ids(q) }).toEqual({ q, got: want });
        expect({ q, n: await store.countRuns(q) }).toEqual({ q, n: want.length });
      }
    });

    it("sorts by createdAt or updatedAt, ascending or descending, with id breaking ties", async () => {
      // Ties on purpose: four runs share a creation time, and the changed ones may share a millisecond.
      const created = [3_000, 1_000, 2_000, 2_000, 5_000, 2_000, 4_000, 2_000, 1_000, 6_000];
      for (const [i, at] of created.entries()) await make(`r${String(i).padStart(2, "0")}`, { createdAt: at });
      for (const id of ["r04", "r01", "r07", "r02"]) await setStatus(id, "paused");
      const rows = await every();
      expect(rows).toHaveLength(10);
      for (const sort of ["createdAt", "updatedAt"] as const) {
        for (const order of ["asc", "desc"] as const) {
          const want = sorted(rows, sort, order);
          expect({ sort, order, got: await ids({ sort, order }) }).toEqual({ sort, order, got: want });
          // The same order page by page, for a page size that cuts through the ties.
          expect({ sort, order, paged: (await walk({ sort, order, limit: 3 })).seen }).toEqual({ sort, order, paged: want });
        }
      }
      // The default: newest created first.
      expect(await ids({})).toEqual(sorted(rows, "createdAt", "desc"));
    });

    it("pages with a cursor: each run once, and runs created between pages do not shift the pages", async () => {
      for (let i = 0; i < 10; i++) await make(`n${String(i).padStart(2, "0")}`, { createdAt: 1_000 + i * 10 });
      // Newest first: runs created meanwhile are newer than the cursor and stay out of this walk.
      let extra = 0;
      const desc = await walk({ limit: 3 }, async () => {
        await make(`x${String(extra++).padStart(2, "0")}`, { createdAt: 5_000 + extra });
      });
      expect(desc.seen).toEqual(["n09", "n08", "n07", "n06", "n05", "n04", "n03", "n02", "n01", "n00"]);
      expect(desc.pages).toBe(4);
      // Oldest first: runs created meanwhile are ahead of the cursor, and each is met once.
      const before = extra;
      const asc = await walk({ order: "asc", limit: 4, createdBefore: 10_000 }, async (page) => {
        if (page <= 2) await make(`y${String(page).padStart(2, "0")}`, { createdAt: 9_000 + page });
      });
      const all = [...Array.from({ length: 10 }, (_, i) => `n${String(i).padStart(2, "0")}`), ...Array.from({ length: before }, (_, i) => `x${String(i).padStart(2, "0")}`), "y01", "y02"];
      expect(asc.seen).toEqual(all);
      expect(new Set(asc.seen).size).toBe(asc.seen.length);
      // A run created behind the cursor (another host's clock) is not met by the walk, and nothing repeats.
      const p1 = await store.listRuns({ order: "asc", limit: 5 });
      await make("z00", { createdAt: 500 });
      const p2 = await store.listRuns({ order: "asc", limit: 100, cursor: p1.nextCursor ?? "" });
      const seen = [...p1.runs, ...p2.runs].map((r) => r.id);
      expect(seen).not.toContain("z00");
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toHaveLength(10 + before + 2);
    });

    it("by updatedAt, newest first, a run changed between pages is not shown twice", async () => {
      for (let i = 0; i < 9; i++) await make(`u${String(i).padStart(2, "0")}`, { createdAt: 1_000 + i });
      const first = await store.listRuns({ sort: "updatedAt", limit: 3 });
      expect(first.runs.map((r) => r.id)).toEqual(["u08", "u07", "u06"]);
      // One already shown and one not yet reached move to the newest end.
      await setStatus("u07", "paused");
      await setStatus("u02", "paused");
      const rest: string[] = [];
      for (let cursor = first.nextCursor; cursor !== null; ) {
        const page = await store.listRuns({ sort: "updatedAt", limit: 3, cursor });
        rest.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
      }
      expect(rest).toEqual(["u05", "u04", "u03", "u01", "u00"]);
      // A new walk sees both at the front.
      expect((await ids({ sort: "updatedAt", limit: 2 })).sort()).toEqual(["u02", "u07"]);
    });

    it("the default page is 100 runs and the largest 1000; the last page has no cursor", async () => {
      const kids = Array.from({ length: 1_001 }, (_, i) => newRun(`k${String(i).padStart(4, "0")}`, { createdAt: 10_000 + i, parentId: "root", parentStepId: `s${i}` }));
      await make("root", { createdAt: 1 });
      for (let i = 0; i < kids.length; i += 250) expect(await commitOne(store, [{ runId: "root", newRuns: kids.slice(i, i + 250) }])).toMatchObject({ ok: true });
      const page = await store.listRuns({ parentId: "root" });
      expect(page.runs).toHaveLength(100);
      expect(page.nextCursor).not.toBeNull();
      const big = await store.listRuns({ limit: 1_000 });
      expect(big.runs).toHaveLength(1_000);
      const last = await store.listRuns({ limit: 1_000, cursor: big.nextCursor ?? "" });
      expect(last.runs.map((r) => r.id)).toEqual(["k0000", "root"]);
      expect(last.nextCursor).toBeNull();
      // A page that ends exactly at the last run says so.
      expect((await store.listRuns({ parentId: "root", limit: 1_000, order: "asc", cursor: (await store.listRuns({ parentId: "root", limit: 1, order: "asc" })).nextCursor ?? "" })).nextCursor).toBeNull();
      expect(await store.countRuns({ parentId: "root" })).toBe(1_001);
    });

    it("an id prefix is literal text: % and _ match only themselves", async () => {
      // Distinct creation times: these ids' order among ties would depend on a database's collation.
      for (const [i, id] of ["a_1", "ab1", "a%1", "a%%", "a", "b_1", "A_1", "a_"].entries()) await make(id, { createdAt: 1_000 + i });
      const match = async (idPrefix: string) => (await ids({ idPrefix })).sort();
      expect(await match("a_")).toEqual(["a_", "a_1"]);
      expect(await match("a%")).toEqual(["a%%", "a%1"]);
      expect(await match("a%%")).toEqual(["a%%"]);
      expect(await match("a")).toEqual(["a", "a%%", "a%1", "a_", "a_1", "ab1"]);
      expect(await match("_")).toEqual([]);
      expect(await match("%")).toEqual([]);
      expect(await match("A")).toEqual(["A_1"]);
      expect(await store.countRuns({ idPrefix: "a_" })).toBe(2);
      // With other filters, sorts and pages.
      await setStatus("a%1", "paused");
      expect(await ids({ idPrefix: "a", status: ["paused"] })).toEqual(["a%1"]);
      expect((await walk({ idPrefix: "a", limit: 2, order: "asc" })).seen).toEqual(sorted((await every()).filter((r) => r.id.startsWith("a")), "createdAt", "asc"));
    });

    it("refuses a malformed filter, sort, limit or cursor, naming the field", async () => {
      await make("m01", { createdAt: 1_000 });
      await make("m02", { createdAt: 2_000 });
      const first = await store.listRuns({ limit: 1 });
      const cursor = first.nextCursor ?? "";
      expect(cursor).not.toBe("");
      const refused = async (q: unknown, field: string, text?: RegExp) => {
        const e: unknown = await store.listRuns(q as RunQuery).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect({ q, e }).toMatchObject({ q, e: { code: "STEAD_BAD_OPTION", details: { field } } });
        if (text) expect(text.test((e as Error).message)).toBe(true);
      };
      await refused({ status: ["sleeping"] }, "status", /sleeping/);
      await refused({ status: "pending" }, "status");
      await refused({ definition: "" }, "definition");
      await refused({ sessionId: 7 }, "sessionId");
      await refused({ createdSince: "yesterday" }, "createdSince");
      await refused({ updatedBefore: 1.5 }, "updatedBefore");
      await refused({ idPrefix: "" }, "idPrefix");
      await refused({ sort: "name" }, "sort");
      await refused({ order: "up" }, "order");
      await refused({ limit: 0 }, "limit");
      await refused({ limit: 2.5 }, "limit");
      await refused({ limit: 1_001 }, "limit", /1000/);
      await refused({ colour: "red" }, '"colour"');
      await refused({ cursor: "" }, "cursor");
      await refused({ cursor: "not a cursor!" }, "cursor");
      await refused({ cursor: Buffer.from("[1,2,3]").toString("base64url") }, "cursor");
      await refused({ cursor: Buffer.from('[1,"c","d","x","m01","abc"]').toString("base64url") }, "cursor");
      await refused({ cursor: "x".repeat(5_000) }, "cursor");
      await refused({ cursor: 12 }, "cursor");
      // A real cursor, continued with another sort, order or filter.
      await refused({ cursor, sort: "updatedAt" }, "cursor", /createdAt desc/);
      await refused({ cursor, order: "asc" }, "cursor");
      await refused({ cursor, status: ["pending"] }, "cursor", /filters/);
      // Its own listing continues.
      expect(await ids({ cursor, limit: 1 })).toEqual(["m01"]);
      await expect(store.countRuns({ status: ["nope" as "pending"] })).rejects.toMatchObject({ code: "STEAD_BAD_OPTION", details: { field: "status" } });
    });

    it("runActivity gives each run's last journal entry, latest event time, open waits and open holds", async () => {
      await make("w01", { createdAt: 1_000, journal: [step(0, "fetch"), step(1, "plan"), step(2, "ship", { status: "failed", output: null, error: '{"message":"x"}' })] });
      await make("w02", { createdAt: 2_000 });
      await commitOne(store, [{ runId: "w01", waits: [{ name: "ok", kind: "approval", seq: 3 }, { name: "later", kind: "signal", seq: 4 }] }]);
      await commitOne(store, [{ runId: "w01", resolveWaits: [{ name: "later", status: "cancelled" }] }]);
      await commitOne(store, [{ runId: "w01", holds: [{ kind: "process_failed", reason: "a", details: "{}" }, { kind: "nondeterminism", reason: "b", details: "{}" }] }]);
      const [open] = (await store.holds({ runId: "w01" })).filter((x) => x.kind === "process_failed");
      await commitOne(store, [{ runId: "w01", releaseHolds: [{ id: open?.id ?? -1, choice: "retry" }] }]);
      const events = await store.events({ runId: "w01" });
      const got = await store.runActivity(["w02", "w01", "missing", "w01"]);
      expect(got.map((a) => a.runId)).toEqual(["w02", "w01", "missing"]);
      const [w02, w01, missing] = got;
      expect(w01).toMatchObject({
        runId: "w01",
        lastStep: { runId: "w01", seq: 2, stepId: "ship", kind: "step", status: "failed", attempt: 1 },
        lastEventAt: events[events.length - 1]?.at,
        openWaits: [{ runId: "w01", name: "ok", kind: "approval", status: "open" }],
        openHolds: [{ runId: "w01", kind: "nondeterminism", status: "open" }],
      });
      expect(w01?.openWaits).toHaveLength(1);
      expect(w01?.openHolds).toHaveLength(1);
      expect(w02).toMatchObject({ runId: "w02", lastStep: null, openWaits: [], openHolds: [] });
      expect(w02?.lastEventAt).toBe((await store.events({ runId: "w02" }))[0]?.at);
      expect(missing).toEqual({ runId: "missing", lastStep: null, lastEventAt: null, openWaits: [], openHolds: [] });
      expect(await store.runActivity([])).toEqual([]);
      await expect(store.runActivity(Array.from({ length: 1_001 }, (_, i) => `r${i}`))).rejects.toMatchObject({ code: "STEAD_BAD_OPTION", details: { field: "runIds" } });
    });

    it("completedStep finds a step's completed entry, not one that failed or is pending", async () => {
      await make("s01", { journal: [step(0, "a"), step(1, "b", { status: "failed", output: null, error: '{"message":"x"}' }), step(2, "c", { output: '{"text":"hi"}' })] });
      expect(await store.completedStep("s01", "c")).toEqual((await store.journal("s01"))[2]);
      expect(await store.completedStep("s01", "a")).toMatchObject({ seq: 0, output: '"a"' });
      expect(await store.completedStep("s01", "b")).toBeUndefined();
      expect(await store.completedStep("s01", "zz")).toBeUndefined();
      expect(await store.completedStep("nobody", "a")).toBeUndefined();
    });
  });
}
