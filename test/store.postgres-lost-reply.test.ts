/**
 * A commit whose connection fails mid-flight has an unknown outcome: the store must learn it from
 * the database once the old backend is gone, never by guessing. A commit that committed and is
 * sent again would write its events twice; one that did not and is taken as done would lose them.
 * The network is a real TCP proxy that loses the message (the server never sees the commit) or the
 * reply (the server committed); what happened is read from the tables by a connection of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { fenced, LEASE, newRun, owner, step, DEF_A } from "../src/store/conformance/fixtures.js";
import type { Mutation } from "../src/store/types.js";
import { replyLossProxy, type ReplyLossProxy } from "./helpers/reply-loss-proxy.js";
import { withClient } from "./setup/databases.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

const WORKER = owner("w-lost-reply");

interface Shape {
  name: string;
  /** The prepared statement the commit is sent as: what the proxy watches for. */
  statement: string;
  write: (runId: string, fence: number) => Mutation;
  /** The events the write adds, by type. */
  events: string[];
}

const SHAPES: Shape[] = [
  {
    name: "a step and its event",
    statement: "stead_one_step_commit",
    write: (runId, fence) => fenced(runId, fence, WORKER.workerId, { run: { lostClaims: 0 }, steps: [step(0, "a")], events: [{ type: "step.completed", data: { step: "a" } }] }),
    events: ["step.completed"],
  },
  {
    name: "two steps and their events",
    statement: "stead_step_commit",
    write: (runId, fence) =>
      fenced(runId, fence, WORKER.workerId, { steps: [step(0, "a"), step(1, "b")], events: [{ type: "step.completed", data: { step: "a" } }, { type: "step.completed", data: { step: "b" } }] }),
    events: ["step.completed", "step.completed"],
  },
];

describe("Postgres commits whose message or reply is lost", () => {
  let db: TestDatabase;
  let proxy: ReplyLossProxy;
  let store: PostgresStore;
  let n = 0;

  beforeAll(async () => {
    db = await freshDatabase("lost-reply");
    proxy = await replyLossProxy(db.url);
    store = new PostgresStore({ connectionString: proxy.url, faultRetryMs: 20_000 });
    await store.migrate();
  });

  afterAll(async () => {
    await store?.close();
    await proxy?.close();
    await db?.drop();
  });

  async function claimedRun(): Promise<{ runId: string; fence: number }> {
    const runId = `lost-${n++}`;
    await store.createRun(newRun(runId), [{ type: "run.created" }]);
    const [claimed] = await store.claim({ owner: WORKER, definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: Date.now(), runIds: [runId] });
    if (!claimed) throw new Error(`${runId} was not claimed`);
    return { runId, fence: claimed.run.fence };
  }

  /** What the database holds for the run, read past the store: event types in order, and journal seqs. */
  const seen = (runId: string) =>
    withClient(db.url, async (c) => ({
      events: (await c.query<{ type: string }>("SELECT type FROM events WHERE run_id = $1 AND type NOT IN ('run.created', 'run.claimed') ORDER BY seq", [runId])).rows.map((r) => r.type),
      steps: (await c.query<{ seq: number }>("SELECT seq FROM steps WHERE run_id = $1 ORDER BY seq", [runId])).rows.map((r) => r.seq),
    }));

  for (const shape of SHAPES) {
    it(`${shape.name}: the reply is lost after it committed; the outcome is read back, not sent again`, async () => {
      const { runId, fence } = await claimedRun();
      proxy.arm(shape.statement, "reply");
      const [result] = await store.commit([[shape.write(runId, fence)]]);
      expect(proxy.fired(), "the proxy lost the reply").toBe(true);
      expect(result).toEqual({ ok: true, pauseRequested: false });
      expect(await seen(runId)).toEqual({ events: shape.events, steps: shape.write(runId, fence).steps?.map((s) => s.seq) });
    });

    it(`${shape.name}: the message is lost before the server saw it; it is sent again and applied once`, async () => {
      const { runId, fence } = await claimedRun();
      proxy.arm(shape.statement, "query");
      const [result] = await store.commit([[shape.write(runId, fence)]]);
      expect(proxy.fired(), "the proxy lost the message").toBe(true);
      expect(result).toEqual({ ok: true, pauseRequested: false });
      expect(await seen(runId)).toEqual({ events: shape.events, steps: shape.write(runId, fence).steps?.map((s) => s.seq) });
    });

    it(`${shape.name}: the reply of a commit the fence refused is lost; it is reported refused and writes nothing`, async () => {
      const { runId, fence } = await claimedRun();
      proxy.arm(shape.statement, "reply");
      const [result] = await store.commit([[shape.write(runId, fence + 1)]]);
      expect(proxy.fired(), "the proxy lost the reply").toBe(true);
      expect(result).toMatchObject({ ok: false, reason: "lease", runId });
      expect(await seen(runId)).toEqual({ events: [], steps: [] });
    });
  }

  it("a step the reply of whose first write was lost, rewritten by its outcome, is read back as the outcome", async () => {
    const { runId, fence } = await claimedRun();
    const intent = fenced(runId, fence, WORKER.workerId, { steps: [step(0, "e", { kind: "effect", status: "intent", output: null, completedAt: null })], events: [{ type: "effect.started" }] });
    proxy.arm("stead_one_step_commit", "reply");
    expect(await store.commit([[intent]])).toEqual([{ ok: true, pauseRequested: false }]);
    proxy.arm("stead_one_step_commit", "reply");
    expect(await store.commit([[fenced(runId, fence, WORKER.workerId, { steps: [step(0, "e", { kind: "effect" })], events: [{ type: "effect.completed" }] })]])).toEqual([{ ok: true, pauseRequested: false }]);
    expect(proxy.fired()).toBe(true);
    expect(await seen(runId)).toEqual({ events: ["effect.started", "effect.completed"], steps: [0] });
    expect((await store.journal(runId)).map((s) => s.status)).toEqual(["completed"]);
  });
});
