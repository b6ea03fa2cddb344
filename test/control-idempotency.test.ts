/**
 * Every control command is safe to retry. With an idempotency key, a repeat returns the first
 * result (`already`) and changes nothing, concurrent repeats change things once, and the same key
 * with other arguments is refused naming its first use. Without a key, repeating a decision
 * identical to the one recorded succeeds ("already … by …"); a conflicting one is refused naming
 * the first. Asserted from the store's rows (runs, events, waits), on SQLite and Postgres.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStead, SteadError, workflow, type Stead } from "../src/index.js";
import { exportStore, importStore, VerifiedDump } from "../src/store/transfer/index.js";
import { FAST_FOLLOW, tempStorePath } from "./helpers/temp-store.js";
import { caught, waitUntil } from "./helpers/waiting.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";
import { PassThrough } from "node:stream";
import { STORE_KINDS } from "./helpers/both-stores.js";

const gate = workflow("gate", { version: "1" }, async (ctx, input: { x: number }) => {
  const d = await ctx.approval("ok", { x: input.x });
  const s = await ctx.signal<{ n: number }>("go");
  return { approved: d.approved, n: s.n };
});
const fails = workflow("fails", { version: "1" }, async (ctx) => {
  await ctx.step("boom", () => {
    throw new Error("no key yet");
  });
});
const chatter = workflow("chatter", { version: "1" }, (_ctx, text: string) => text.toUpperCase());

describe.each(STORE_KINDS)("idempotent control commands (%s)", (kind) => {
  const open: Stead[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    for (const c of cleanups.splice(0)) await c();
  });
  async function location(): Promise<string> {
    if (kind === "sqlite") {
      const t = tempStorePath();
      cleanups.push(t.remove);
      return t.path;
    }
    const db: TestDatabase = await freshDatabase("idem");
    cleanups.push(() => db.drop());
    return db.url;
  }
  async function steadOn(store: string, options: { idempotencyTtlMs?: number } = {}): Promise<Stead> {
    const s = createStead({ store, ...options });
    open.push(s);
    await s.ready();
    return s;
  }
  const eventsOf = async (stead: Stead, runId: string, type: string) => (await stead.runs.events({ runId })).filter((e) => e.type === type);

  it("start and send with a key create one run and one turn, whoever repeats them and however often", async () => {
    const stead = await steadOn(await location());
    const first = await stead.runs.start(gate, { x: 1 }, { idempotencyKey: "ticket-42" });
    const again = await Promise.all([1, 2, 3].map(() => stead.runs.start(gate, { x: 1 }, { idempotencyKey: "ticket-42" })));
    expect(first.already).toBe(false);
    for (const r of again) expect(r).toEqual({ id: first.id, already: true });
    expect((await stead.runs.list({ definition: "gate" })).runs.map((r) => r.id)).toEqual([first.id]);
    const other = (await caught(() => stead.runs.start(gate, { x: 2 }, { idempotencyKey: "ticket-42" }))) as SteadError;
    expect(other.code).toBe("STEAD_IDEMPOTENCY_CONFLICT");
    expect(other.message).toMatch(/ticket-42.*start gate.*other arguments, at \d{4}-.*"x":1/);
    expect((await stead.runs.list({ definition: "gate" })).runs.length).toBe(1);
    // The same key for another definition is another key.
    expect((await stead.runs.start(chatter, "hi", { idempotencyKey: "ticket-42" })).already).toBe(false);

    const session = stead.session(chatter, "support-1");
    const t1 = await session.send("where is my order?", { idempotencyKey: "msg-1" });
    const t1again = await session.send("where is my order?", { idempotencyKey: "msg-1" });
    expect(t1again).toEqual({ ...t1, already: true });
    expect((await session.turns()).length).toBe(1);
    await session.send("where is my order?");
    expect((await session.turns()).length).toBe(2);
  });

  it("approve, signal, pause, resume, cancel and fork with a key change things once; other arguments are refused", async () => {
    const stead = await steadOn(await location());
    const run = await stead.run(gate, { x: 1 }, FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    const approvals = await Promise.all([0, 1, 2].map(() => stead.runs.approve(run.id, "ok", { by: "ann", idempotencyKey: "a-1" })));
    expect(approvals.filter((r) => !r.already)).toHaveLength(1);
    expect(await eventsOf(stead, run.id, "approval.approved")).toHaveLength(1);
    expect(await caught(() => stead.runs.deny(run.id, "ok", { by: "ann", idempotencyKey: "a-1" }))).toMatchObject({ code: "STEAD_INVALID_STATE" });
    expect(await caught(() => stead.runs.approve(run.id, "ok", { by: "bob", reason: "other", idempotencyKey: "a-1" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });

    const parked = await stead.runs.follow(run.id, [gate], FAST_FOLLOW);
    expect(parked.status).toBe("waiting");
    expect((await stead.runs.pause(run.id, { idempotencyKey: "p-1" })).already).toBe(false);
    expect((await stead.runs.pause(run.id, { idempotencyKey: "p-1" })).already).toBe(true);
    expect((await stead.runs.resume(run.id, { idempotencyKey: "r-1" })).already).toBe(false);
    expect((await stead.runs.resume(run.id, { idempotencyKey: "r-1" })).already).toBe(true);
    expect(await eventsOf(stead, run.id, "run.paused")).toHaveLength(1);
    expect(await eventsOf(stead, run.id, "run.resumed")).toHaveLength(1);
    await stead.runs.follow(run.id, [gate], FAST_FOLLOW);

    const signals = await Promise.all([0, 1].map(() => stead.runs.signal(run.id, "go", { n: 7 }, { by: "ops", idempotencyKey: "s-1" })));
    expect(signals.map((s) => s.already).sort()).toEqual([false, true]);
    expect(await eventsOf(stead, run.id, "signal.received")).toHaveLength(1);
    expect(await caught(() => stead.runs.signal(run.id, "go", { n: 8 }, { idempotencyKey: "s-1" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
    expect((await stead.runs.follow(run.id, [gate], FAST_FOLLOW)).output).toEqual({ approved: true, n: 7 });

    const f1 = await stead.runs.fork(run.id, { idempotencyKey: "f-1" });
    const f2 = await stead.runs.fork(run.id, { idempotencyKey: "f-1" });
    expect(f2).toEqual({ ...f1, already: true });
    expect((await stead.runs.list({ definition: "gate" })).runs.length).toBe(2);
    const c1 = await stead.runs.cancel(f1.id, { idempotencyKey: "c-1", by: "ann" });
    const c2 = await stead.runs.cancel(f1.id, { idempotencyKey: "c-1", by: "ann" });
    expect(c1.already).toBe(false);
    expect(c2).toMatchObject({ cancelled: [f1.id], already: true });
    expect(await eventsOf(stead, f1.id, "run.cancelled")).toHaveLength(1);
  });

  it("release and retry with a key act once", async () => {
    const stead = await steadOn(await location());
    const run = await stead.run(fails, null, FAST_FOLLOW);
    expect(run.status).toBe("failed");
    const r1 = await stead.runs.retry(run.id, { by: "ann", idempotencyKey: "t-1" });
    const r2 = await stead.runs.retry(run.id, { by: "ann", idempotencyKey: "t-1" });
    expect(r1).toMatchObject({ stepId: "boom", attempt: 2, already: false });
    expect(r2).toMatchObject({ stepId: "boom", attempt: 2, already: true });
    expect(await eventsOf(stead, run.id, "run.retried")).toHaveLength(1);
  });

  it("without a key: the same decision again succeeds naming the first; a conflicting one is refused naming it; concurrent answers have one winner", async () => {
    const stead = await steadOn(await location());
    const run = await stead.run(gate, { x: 1 }, FAST_FOLLOW);
    const results = await Promise.allSettled([stead.runs.approve(run.id, "ok", { by: "ann" }), stead.runs.deny(run.id, "ok", { by: "bob", reason: "no" })]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as SteadError] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const winner = (await stead.runs.waits(run.id)).find((w) => w.name === "ok")?.resolvedBy;
    const verb = winner === "ann" ? "approved" : "denied";
    expect(lost[0]?.message).toMatch(new RegExp(`"ok" on run .* was already ${verb} by ${winner ?? "?"} at \\d{4}-`));
    expect(lost[0]?.message).not.toMatch(/waits for nothing/);
    expect((await eventsOf(stead, run.id, "approval.approved")).length + (await eventsOf(stead, run.id, "approval.denied")).length).toBe(1);
    const same = winner === "ann" ? await stead.runs.approve(run.id, "ok", { by: "carol" }) : await stead.runs.deny(run.id, "ok", { by: "carol" });
    expect(same).toMatchObject({ by: winner, already: true });

    const cancelled = await stead.runs.cancel(run.id, { by: "ann" });
    expect((await stead.runs.cancel(run.id, { by: "bob" })).already).toBe(true);
    expect(cancelled.already).toBe(false);
    expect((await stead.runs.pause((await stead.runs.start(gate, { x: 3 })).id)).already).toBe(false);
  });

  it("stead.run with a key starts one run however often it is called, and a worker's sweep deletes expired keys", async () => {
    // The key's life counts from the start; it must outlast one whole run on a loaded machine.
    const stead = await steadOn(await location(), { idempotencyTtlMs: 4000 });
    const a = await stead.run(chatter, "hello", { ...FAST_FOLLOW, idempotencyKey: "run-1" });
    const b = await stead.run(chatter, "hello", { ...FAST_FOLLOW, idempotencyKey: "run-1" });
    expect(b.id).toBe(a.id);
    expect((await stead.runs.list({ definition: "chatter" })).runs.length).toBe(1);
    const keyRows = async () => Number((await stead.store.readRows("idempotency_keys", null, 100)).length);
    expect(await keyRows()).toBe(1);
    await waitUntil("the key to expire", async () => ((await stead.store.idempotencyKey("start", "chatter", "run-1")) === undefined ? true : undefined), { timeoutMs: 10_000, pollMs: 100 });
    expect(await keyRows()).toBe(1);
    const w = stead.worker({ definitions: [chatter], pollMs: 20 }).start();
    await waitUntil("the sweep to delete the expired key", async () => ((await keyRows()) === 0 ? true : undefined), { timeoutMs: 10_000, pollMs: 50 });
    await w.stop();
  });

  it("keys expire after idempotencyTtlMs (and are pruned), and travel with export and import", async () => {
    const from = await location();
    const stead = await steadOn(from, { idempotencyTtlMs: 300 });
    const kept = await steadOn(from);
    const a = await stead.runs.start(chatter, "one", { idempotencyKey: "short" });
    const b = await kept.runs.start(chatter, "two", { idempotencyKey: "long" });
    await waitUntil("the short key to expire", async () => ((await stead.store.idempotencyKey("start", "chatter", "short")) === undefined ? true : undefined), { timeoutMs: 5000, pollMs: 50 });
    const a2 = await stead.runs.start(chatter, "one", { idempotencyKey: "short" });
    expect(a2.already).toBe(false);
    expect(a2.id).not.toBe(a.id);
    expect(await stead.store.pruneIdempotencyKeys()).toBe(0);

    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    await exportStore(kept.store, out);
    out.end();
    const t = tempStorePath();
    cleanups.push(t.remove);
    const dump = await VerifiedDump.from(() => PassThrough.from([Buffer.concat(chunks)]), "dump");
    const target = await steadOn(t.path);
    await importStore(target.store, dump);
    await dump.dispose();
    expect(await target.runs.start(chatter, "two", { idempotencyKey: "long" })).toEqual({ id: b.id, already: true });
  });
});
