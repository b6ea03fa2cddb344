/**
 * Every decision records who made it: each control command (start, send, approve, deny, signal,
 * release, pause, resume, cancel, retry, fork) writes an event whose data names `by`, read here
 * from the events table itself, on SQLite and on Postgres. The server passes a token's name as
 * `by`; a command given none records `by: null`, so the field is always there to read.
 */
import { afterEach, describe, expect, it } from "vitest";
import { workflow, type Worker } from "../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { FAST_WORKER } from "./helpers/temp-store.js";

let drift = "first";
const gated = workflow("by-gated", async (ctx) => {
  const d = await ctx.approval("ok");
  return d.approved;
});
const signalled = workflow("by-signal", async (ctx) => ctx.signal<string>("go"));
let failOnce = true;
const flaky = workflow("by-flaky", async (ctx) =>
  ctx.step("try", () => {
    if (failOnce) throw new Error("not yet");
    return "done";
  }),
);
const drifting = workflow("by-drift", async (ctx) => {
  const name = drift;
  await ctx.step(name, () => name);
  await ctx.approval("next");
  return name;
});
const quick = workflow("by-quick", async (ctx) => ctx.step("one", () => 1));
const ALL = [gated, signalled, flaky, drifting, quick];
const WAIT = { timeoutMs: 20_000 } as const;

describe.each(STORE_KINDS)("who decided, in the events of %s", (kind) => {
  let s: OnStore;
  let w: Worker | undefined;
  afterEach(async () => {
    await w?.stop({ graceMs: 500 });
    w = undefined;
    await s.cleanup();
  });

  /** `data.by` of every event of `type` of run `runId`, from the events table. */
  async function byOf(runId: string, type: string): Promise<unknown[]> {
    const rows = await s.rows("SELECT data FROM events WHERE run_id = ? AND type = ? ORDER BY seq", runId, type);
    return rows.map((r) => (JSON.parse(String(r.data)) as { by?: unknown }).by);
  }

  it("every control command's event names who gave it", async () => {
    s = await onStore(kind, "control-by");
    const { stead } = s;
    drift = "first";
    failOnce = true;
    w = stead.worker({ definitions: ALL, ...FAST_WORKER });
    w.start();
    const parked = (id: string) => stead.runs.waitFor(id, { ...WAIT, until: (r) => r.status === "waiting" });

    await stead.runs.start(gated, null, { id: "approve-1", by: "ann-start" });
    await stead.runs.start(gated, null, { id: "deny-1", by: "ann-start" });
    await stead.runs.start(signalled, null, { id: "signal-1" });
    await stead.runs.start(flaky, null, { id: "retry-1" });
    await stead.runs.start(drifting, null, { id: "hold-1" });
    await stead.runs.start(gated, null, { id: "cancel-1" });
    await stead.runs.start(quick, null, { id: "fork-1" });
    for (const id of ["approve-1", "deny-1", "signal-1", "hold-1", "cancel-1"]) await parked(id);

    await stead.runs.approve("approve-1", "ok", { by: "ann-approve" });
    await stead.runs.deny("deny-1", "ok", { by: "ann-deny", reason: "no" });
    await stead.runs.signal("signal-1", "go", "now", { by: "ann-signal" });
    expect((await stead.runs.waitFor("retry-1", WAIT)).status).toBe("failed");
    failOnce = false;
    await stead.runs.retry("retry-1", { by: "ann-retry" });
    drift = "second";
    await stead.runs.approve("hold-1", "next", { by: "ann-approve" });
    await stead.runs.waitFor("hold-1", { ...WAIT, until: (r) => r.status === "held" });
    await stead.runs.release("hold-1", "nondeterminism", { choice: "retry", by: "ann-release" });
    await stead.runs.cancel("cancel-1", { by: "ann-cancel", reason: "stop" });
    await stead.runs.resume("cancel-1", { by: "ann-resume" });
    expect((await stead.runs.waitFor("fork-1", WAIT)).status).toBe("completed");
    const fork = await stead.runs.fork("fork-1", { by: "ann-fork" });
    await w.stop({ graceMs: 500 });
    w = undefined;

    await stead.runs.start(quick, null, { id: "pause-1", by: "ann-start" });
    await stead.runs.pause("pause-1", { by: "ann-pause" });
    await stead.runs.resume("pause-1", { by: "ann-resume" });
    const turn = await stead.session(quick, "chat-1").send(null, { by: "ann-send" });

    expect(await byOf("approve-1", "run.created")).toEqual(["ann-start"]);
    expect(await byOf("approve-1", "approval.approved")).toEqual(["ann-approve"]);
    expect(await byOf("deny-1", "approval.denied")).toEqual(["ann-deny"]);
    expect(await byOf("signal-1", "signal.received")).toEqual(["ann-signal"]);
    expect(await byOf("retry-1", "run.retried")).toEqual(["ann-retry"]);
    expect(await byOf("hold-1", "hold.released")).toEqual(["ann-release"]);
    expect(await byOf("cancel-1", "run.cancelled")).toEqual(["ann-cancel"]);
    expect(await byOf("cancel-1", "run.resumed")).toEqual(["ann-resume"]);
    expect(await byOf("fork-1", "run.forked")).toEqual(["ann-fork"]);
    expect(await byOf(fork.id, "run.created")).toEqual(["ann-fork"]);
    expect(await byOf("pause-1", "run.paused")).toEqual(["ann-pause"]);
    expect(await byOf("pause-1", "run.resumed")).toEqual(["ann-resume"]);
    expect(await byOf(turn.runId, "run.created")).toEqual(["ann-send"]);
    // Given no one, a start says so rather than leaving the field out.
    expect(await byOf("signal-1", "run.created")).toEqual([null]);
  });

  it("a definition_changed hold released by accepting the change names who accepted it", async () => {
    s = await onStore(kind, "control-by-accept");
    const { stead } = s;
    await stead.runs.start(quick, null, { id: "acc-1" });
    // A fingerprint the code does not have: the first claim holds the run definition_changed.
    await stead.store.commit([[{ runId: "acc-1", run: { fingerprint: "another" } }]]);
    w = stead.worker({ definitions: [quick], ...FAST_WORKER });
    w.start();
    await stead.runs.waitFor("acc-1", { ...WAIT, until: (r) => r.status === "held" });
    await stead.runs.resume("acc-1", { acceptChange: true, by: "ann-accept" });
    expect(await byOf("acc-1", "hold.released")).toEqual(["ann-accept"]);
  });
});
