/**
 * The instance's verbs live in namespaces (`stead.runs.approve`), as the HTTP client's do. The flat
 * methods (`stead.approve`) still work for one release and warn once per name, as a
 * DeprecationWarning with code STEAD_DEP_FLAT_METHOD naming the new spelling. No path through the
 * namespaces, the instance's own verbs (`run`, `session`) or the server warns: that would tell a
 * user who changed nothing to change their code.
 *
 * Each test loads Stead anew (`vi.resetModules`): a warning is given once per name per loaded
 * module, so a name warned in one test would pass unheard in the next.
 */
import { Writable } from "node:stream";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type * as Api from "../src/index.js";
import { tempDir } from "./helpers/temp-store.js";

/** Every namespace and its verbs (docs: namespaces.md); `tokens` was an object already. */
const NAMESPACES = {
  runs: ["start", "startByName", "get", "list", "count", "activity", "journal", "journalPage", "waits", "events", "eventsAfter", "approve", "deny", "signal", "pause", "resume", "retry", "cancel", "release", "fork", "why", "follow", "waitFor", "deleteFinished"],
  sessions: ["list", "runIds", "lastTurn", "transcript", "get", "send"],
  workspaces: ["snapshots", "restore", "files", "entries", "file", "diff"],
  definitions: ["list", "workers"],
  waits: ["list"],
  holds: ["list"],
  tokens: ["create", "list", "revoke", "verify"],
  keys: ["status", "rotate"],
  admin: ["tally", "gc", "storeInfo", "readiness", "exportDump", "backup", "restoreBackup", "importDump"],
} as const;

/** Each flat method and its new spelling. */
const FLAT: Readonly<Record<string, string>> = {
  start: "runs.start",
  startByName: "runs.startByName",
  get: "runs.get",
  list: "runs.list",
  count: "runs.count",
  activity: "runs.activity",
  journal: "runs.journal",
  journalPage: "runs.journalPage",
  waits: "runs.waits",
  events: "runs.events",
  eventsAfter: "runs.eventsAfter",
  approve: "runs.approve",
  deny: "runs.deny",
  signal: "runs.signal",
  pause: "runs.pause",
  resume: "runs.resume",
  retry: "runs.retry",
  cancel: "runs.cancel",
  release: "runs.release",
  fork: "runs.fork",
  why: "runs.why",
  follow: "runs.follow",
  waitFor: "runs.waitFor",
  deleteFinishedRuns: "runs.deleteFinished",
  sessions: "sessions.list",
  sessionRunIds: "sessions.runIds",
  lastTurn: "sessions.lastTurn",
  transcript: "sessions.transcript",
  sessionWithTurns: "sessions.get",
  sendToSession: "sessions.send",
  snapshots: "workspaces.snapshots",
  restore: "workspaces.restore",
  snapshotFiles: "workspaces.files",
  snapshotEntries: "workspaces.entries",
  snapshotFile: "workspaces.file",
  diff: "workspaces.diff",
  definitions: "definitions.list",
  liveWorkers: "definitions.workers",
  openWaits: "waits.list",
  holds: "holds.list",
  keysStatus: "keys.status",
  rotateKeys: "keys.rotate",
  tally: "admin.tally",
  gc: "admin.gc",
  storeInfo: "admin.storeInfo",
  readiness: "admin.readiness",
  exportDump: "admin.exportDump",
  backup: "admin.backup",
  restoreBackup: "admin.restoreBackup",
  importDump: "admin.importDump",
};

type Heard = { name: string; code: string | undefined; message: string };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Stead loaded anew (its warnings not given yet), an instance on a fresh store, and the warnings this process emits from now on. */
async function fresh(): Promise<{ api: typeof Api; stead: Api.Stead; dir: string; heard: () => Promise<Heard[]> }> {
  vi.resetModules();
  const api = await import("../src/index.js");
  const d = tempDir("stead-ns-");
  const stead = api.createStead({ store: join(d.dir, "stead.db") });
  const warnings: Heard[] = [];
  const listener = (w: Error & { code?: string }) => warnings.push({ name: w.name, code: w.code, message: w.message });
  process.on("warning", listener);
  cleanups.push(d.remove, () => stead.close(), () => process.off("warning", listener));
  // A warning is emitted on a later turn of the event loop.
  const heard = async () => {
    await new Promise((r) => setImmediate(r));
    return warnings.filter((w) => w.code?.startsWith("STEAD_DEP") === true);
  };
  return { api, stead, dir: d.dir, heard };
}

const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

describe("the namespaced instance", () => {
  it("has every namespaced verb and the verbs that stay top level, with nothing warned", async () => {
    const { stead, heard } = await fresh();
    const namespaces = stead as unknown as Record<string, Record<string, unknown>>;
    for (const [namespace, verbs] of Object.entries(NAMESPACES)) {
      for (const verb of verbs) expect(typeof namespaces[namespace]?.[verb], `stead.${namespace}.${verb}`).toBe("function");
    }
    for (const namespace of Object.keys(NAMESPACES).filter((n) => n !== "tokens")) expect(Object.isFrozen(namespaces[namespace]), namespace).toBe(true);
    for (const verb of ["ready", "readyWhenReachable", "worker", "close", "run", "session"] as const) expect(typeof stead[verb], verb).toBe("function");
    expect(typeof stead.location).toBe("string");
    expect(stead.store).toBeDefined();
    expect(stead.redactor).toBeDefined();
    expect(stead.keyChain).toBeDefined();
    expect(await heard()).toEqual([]);
  });

  it("a flat method still does what it did, and each name warns once, naming the new spelling", async () => {
    const { api, stead, dir, heard } = await fresh();
    const gated = api.workflow("ns-flat-gated", (ctx) => ctx.approval("ship", {}));
    // The flat spelling is what is under test here.
    const { id } = await stead.start(gated, null);
    expect((await stead.get(id)).status).toBe("pending");
    expect((await stead.list()).runs.map((r) => r.id)).toEqual([id]);
    expect(await stead.count()).toBe(1);
    expect((await stead.events({ runId: id })).map((e) => e.type)).toEqual(["run.created"]);
    expect(await stead.definitions()).toEqual([]);
    expect(await stead.holds()).toEqual([]);
    expect(await stead.sessions()).toEqual([]);
    const done = await stead.follow(id, [gated], { pollMs: 20, graceMs: 1_000 });
    expect(done.status).toBe("waiting");
    expect((await stead.waits(id)).map((w) => [w.name, w.status])).toEqual([["ship", "open"]]);
    expect((await stead.openWaits()).waits.map((w) => w.runId)).toEqual([id]);
    expect(await stead.approve(id, "ship", { by: "ann" })).toMatchObject({ approved: true, already: false });
    expect((await stead.follow(id, [gated], { pollMs: 20, graceMs: 1_000 })).status).toBe("completed");
    expect((await stead.tally()).runs).toMatchObject({ completed: 1 });

    // Every flat name, called twice more (a refusal is an answer too: the call reached the verb).
    const flat = stead as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const args: Record<string, unknown[]> = {
      start: [gated, null],
      startByName: ["nobody-announced", null],
      follow: [id, [gated], { pollMs: 20, graceMs: 1_000 }],
      waitFor: [id],
      release: [id, undefined, { choice: "retry" }],
      backup: [join(dir, "copy.db")],
      exportDump: [sink(), { allowLive: true }],
      deleteFinishedRuns: [{ finishedBefore: "30d" }],
      sendToSession: ["no-session", "hi"],
      snapshotFile: [id, "a.txt"],
      diff: [id, "a", "b"],
    };
    for (let i = 0; i < 2; i++) {
      for (const name of Object.keys(FLAT)) await flat[name]?.call(stead, ...(args[name] ?? [id, id]))?.catch(() => undefined);
    }
    const warned = await heard();
    expect(warned.every((w) => w.name === "DeprecationWarning" && w.code === "STEAD_DEP_FLAT_METHOD")).toBe(true);
    expect(warned.map((w) => w.message).sort()).toEqual(Object.entries(FLAT).map(([name, spelling]) => `stead.${name}() is deprecated: use stead.${spelling}()`).sort());
  });

  it("a workflow through the namespaces, `run`, a session and the HTTP API warns nothing", async () => {
    const { api, stead, heard } = await fresh();
    const gated = api.workflow("ns-gated", async (ctx, input: { n: number }) => {
      const d = await ctx.approval("ship", { n: input.n });
      return ctx.step("done", () => (d.approved ? input.n : -1));
    });
    const worker = stead.worker({ definitions: [gated], pollMs: 20, graceMs: 200 }).start();
    cleanups.push(() => worker.stop({ graceMs: 200 }));

    const { id } = await stead.runs.start(gated, { n: 1 });
    expect((await stead.runs.waitFor(id, { until: (r) => r.status === "waiting" })).status).toBe("waiting");
    expect((await stead.waits.list({ kind: "approval" })).waits.map((w) => w.runId)).toEqual([id]);
    expect(await stead.runs.approve(id, "ship", { by: "ann" })).toMatchObject({ approved: true, already: false });
    expect((await stead.runs.waitFor(id)).status).toBe("completed");
    expect(await stead.runs.get(id)).toMatchObject({ status: "completed", output: 1 });
    expect((await stead.runs.journal(id)).map((s) => s.id)).toEqual(["ship", "done"]);
    expect((await stead.runs.waits(id)).map((w) => w.status)).not.toContain("open");
    expect((await stead.runs.list()).runs).toHaveLength(1);
    expect(await stead.runs.why(id)).toBeDefined();
    expect(await stead.admin.tally()).toMatchObject({ runs: { completed: 1 } });
    expect(await stead.admin.readiness()).toMatchObject({ location: stead.location });
    expect(await stead.keys.status()).toMatchObject({ encrypted: false });
    expect((await stead.definitions.list()).map((d) => d.name)).toEqual(["ns-gated"]);
    expect(await stead.holds.list()).toEqual([]);

    const ran = await stead.run(api.workflow("ns-plain", (ctx) => ctx.step("a", () => 2)), null, { pollMs: 20, graceMs: 1_000 });
    expect(ran).toMatchObject({ status: "completed", output: 2 });

    const chat = api.agent("ns-chat", { model: api.scriptedModel({ respond: () => ({ text: "hello" }) }) });
    await stead.session(chat, "ns-s").send("hi");
    expect((await stead.sessions.list()).map((s) => s.id)).toEqual(["ns-s"]);
    expect(await stead.sessions.runIds("ns-s")).toHaveLength(1);

    // The server's own calls, through the typed client.
    const { listen } = await import("../src/server/listen.js");
    const { tokensOf } = await import("../src/server/auth.js");
    const { createClient } = await import("../src/client/index.js");
    const token = (await stead.tokens.create({ name: "olivia", role: "operator" })).token;
    const server = await listen({ stead, authenticate: tokensOf(stead), port: 0 });
    cleanups.push(() => server.close(1_000));
    const client = createClient({ url: server.url, token });
    const started = await client.runs.start("ns-gated", { n: 2 });
    await stead.runs.waitFor(started.id, { until: (r) => r.status === "waiting" });
    expect((await client.waits.list({ kind: "approval" })).waits.map((w) => w.runId)).toEqual([started.id]);
    await client.runs.approve(started.id, "ship", { reason: "fine" });
    await stead.runs.waitFor(started.id);
    expect((await client.runs.get(started.id)).run).toMatchObject({ status: "completed", output: 2 });
    expect((await client.runs.list()).runs.length).toBeGreaterThanOrEqual(3);
    expect((await client.definitions.list()).definitions.length).toBeGreaterThan(0);
    expect((await client.holds.list()).holds).toEqual([]);
    expect((await client.sessions.list()).sessions).toHaveLength(1);
    expect(await client.tally()).toBeDefined();

    expect(await heard()).toEqual([]);
  });
});
