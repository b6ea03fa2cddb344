/**
 * The workspace wired into the engine, in process on real SQLite stores and real directories:
 * snapshots at the journal positions of tool and effect steps, the same-machine policies
 * `restore` and `keep` on resume, settle snapshots during a long step, checkpoint metadata with
 * each step write, refusals of a bad workspace path (API and CLI), and gaps that never fail a run.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, createStead, modelTurns, scriptedModel, SqliteStore, tool, workflow, type EventView, type Stead, type Store, type WorkerOptions } from "../src/index.js";
import { restoreSnapshot } from "../src/workspace/index.js";
import { FAST_FOLLOW, steadHarness, tempDir } from "./helpers/temp-store.js";
import { caught, deferred, waitUntil } from "./helpers/waiting.js";
import { listTree, writeTree, type Spec } from "./helpers/workspace.js";
import { cli, dumpStore, FIXTURES, lines, requireBuild } from "./cli-helpers.js";

const h = steadHarness();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h.cleanup();
});

/** A fresh directory holding `spec`: the workspace of one run. */
function workspaceDir(spec: Spec = {}): string {
  const d = tempDir("stead-ws-engine-");
  cleanups.push(d.remove);
  const dir = join(d.dir, "repo");
  mkdirSync(dir);
  writeTree(dir, spec);
  return dir;
}

const eventsOf = async (stead: Stead, runId: string, type?: string): Promise<EventView[]> =>
  (await stead.runs.events({ runId })).filter((e) => type === undefined || e.type === type);

const SEED: Spec = { "README.md": "# repo\n", "src/a.ts": "export const a = 1;\n", "src/b.ts": "export const b = 2;\n" };

/** The run's workspace; a tool error (the model sees it) without one. */
function rootOf(ctx: { workspace: string | null }): string {
  if (!ctx.workspace) throw new Error("no workspace");
  return ctx.workspace;
}

/** An agent whose script writes, then deletes, through two tools (one an effect, one idempotent). */
function fileAgent(name = "ws-files") {
  return agent(name, {
    model: scriptedModel({
      respond(prompt) {
        switch (modelTurns(prompt)) {
          case 0:
            return { toolCalls: [{ name: "write", input: { path: "src/c.ts", text: "export const c = 3;\n" } }] };
          case 1:
            return { toolCalls: [{ name: "remove", input: { path: "src/a.ts" } }] };
          default:
            return { text: "done" };
        }
      },
    }),
    tools: {
      write: tool({
        input: z.object({ path: z.string(), text: z.string() }),
        run: (i, ctx) => {
          writeFileSync(join(rootOf(ctx), i.path), i.text);
          return "ok";
        },
      }),
      remove: tool({
        input: z.object({ path: z.string() }),
        idempotent: true,
        run: (i, ctx) => {
          rmSync(join(rootOf(ctx), i.path));
          return "ok";
        },
      }),
    },
  });
}

describe("snapshots at journal positions", () => {
  it("an agent run: a start snapshot, then one per tool step (effect or idempotent) at its seq, none for model calls; each restores the files as that step left them", async () => {
    const dir = workspaceDir(SEED);
    const stead = h.create();
    const run = await stead.run(fileAgent(), "edit", { ...FAST_FOLLOW, workspace: dir });
    expect(run.status).toBe("completed");

    const journal = await stead.store.journal(run.id);
    const snaps = await stead.store.snapshots(run.id);
    const toolSteps = journal.filter((s) => s.kind === "tool");
    expect(toolSteps.map((s) => s.stepId)).toEqual(["tool:call_0_0", "tool:call_1_0"]);
    expect(snaps.map((s) => [s.seq, s.stepId, s.source])).toEqual([[-1, null, "start"], ...toolSteps.map((s) => [s.seq, s.stepId, "step"])]);
    expect(snaps.map((s) => s.filesChanged)).toEqual([3, 1, 1]);

    const expected = [
      { "README.md": "# repo\n", "src/a.ts": "export const a = 1;\n", "src/b.ts": "export const b = 2;\n" },
      { "README.md": "# repo\n", "src/a.ts": "export const a = 1;\n", "src/b.ts": "export const b = 2;\n", "src/c.ts": "export const c = 3;\n" },
      { "README.md": "# repo\n", "src/b.ts": "export const b = 2;\n", "src/c.ts": "export const c = 3;\n" },
    ];
    const scratch = workspaceDir();
    for (const [i, s] of snaps.entries()) {
      const to = join(scratch, `at-${i}`);
      await restoreSnapshot(stead.store, s, to);
      const files = Object.fromEntries(Object.entries(listTree(to)).flatMap(([p, v]) => (v.startsWith("file ") ? [[p, v.replace(/^file \d+ /, "")]] : [])));
      expect(files, `snapshot ${i}`).toEqual(expected[i]);
    }
    // The workspace is recorded as an absolute path, and a run without one takes no snapshots.
    expect((await stead.store.getRun(run.id))?.workspace).toBe(dir);
    const bare = await stead.run(fileAgent("ws-bare"), "edit", FAST_FOLLOW);
    expect(bare.status).toBe("completed");
    expect(await stead.store.snapshots(bare.id)).toEqual([]);
  });

  it("a workflow: plain and effect steps are both captured, each at its own position", async () => {
    const dir = workspaceDir(SEED);
    const wf = workflow("ws-plain-and-effect", { version: "1" }, async (ctx, root: string) => {
      await ctx.step("plain", () => writeFileSync(join(root, "plain.txt"), "p"));
      await ctx.step("effect", { effect: true }, () => writeFileSync(join(root, "effect.txt"), "e"));
      return "ok";
    });
    const stead = h.create();
    const run = await stead.run(wf, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(run.status).toBe("completed");
    const snaps = await stead.store.snapshots(run.id);
    expect(snaps.map((s) => [s.stepId, s.source])).toEqual([
      [null, "start"],
      ["plain", "step"],
      ["effect", "step"],
    ]);
    expect(snaps.map((s) => s.filesChanged)).toEqual([3, 1, 1]);
  });

  it("a plain step's files survive a resume (after a wait) under the default policy: nothing completed is put back", async () => {
    const dir = workspaceDir(SEED);
    const wf = workflow("ws-plain-then-wait", { version: "1" }, async (ctx, root: string) => {
      await ctx.step("write", () => writeFileSync(join(root, "b.txt"), "b"));
      await ctx.signal("go");
      return ctx.step("look", () => existsSync(join(root, "b.txt")));
    });
    const stead = h.create();
    const parked = await stead.run(wf, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(parked.status).toBe("waiting");
    await stead.runs.signal(parked.id, "go", null);
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toBe(true);
    const restored = (await eventsOf(stead, parked.id, "workspace.restored")).map((e) => e.data.action);
    expect(restored).toEqual(["unchanged"]);
  });
});

describe("same-machine divergence on resume", () => {
  /** Writes files in an effect step, waits for a signal, then reports what it finds on disk. */
  const diverge = workflow("ws-diverge", { version: "1" }, async (ctx, root: string) => {
    await ctx.step("write", { effect: true }, () => {
      writeTree(root, { "src/new.ts": "export const n = 1;\n", "bin/tool.sh": { content: "#!/bin/sh\n", mode: 0o755 } });
      return "written";
    });
    await ctx.signal("go");
    return ctx.step("look", { effect: true }, () => listTree(root));
  });

  async function parked(): Promise<{ stead: Stead; dir: string; id: string; atWrite: Record<string, string> }> {
    const dir = workspaceDir(SEED);
    const stead = h.create();
    const run = await stead.run(diverge, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(run.status).toBe("waiting");
    const atWrite = listTree(dir);
    // After the last completed step: one file changed, one added, one removed, one mode changed.
    writeFileSync(join(dir, "src/a.ts"), "export const a = 42;\n");
    writeFileSync(join(dir, "scratch.txt"), "left behind\n");
    rmSync(join(dir, "src/b.ts"));
    chmodSync(join(dir, "bin/tool.sh"), 0o644);
    await stead.runs.signal(run.id, "go", null);
    return { stead, dir, id: run.id, atWrite };
  }

  it("policy restore (the default): the changed, added and removed files are put back before the run continues, and the event lists them", async () => {
    const { stead, dir, id, atWrite } = await parked();
    const run = await stead.runs.follow(id, [diverge], FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(run.output).toEqual(atWrite);
    expect(listTree(dir)).toEqual(atWrite);
    const restored = await eventsOf(stead, id, "workspace.restored");
    expect(restored.map((e) => e.data)).toEqual([
      {
        seq: 0,
        step: "write",
        action: "put-back",
        workspace: dir,
        changed: ["bin/tool.sh", "src/a.ts"],
        added: ["scratch.txt"],
        removed: ["src/b.ts"],
        counts: { changed: 2, added: 1, removed: 1 },
      },
    ]);
  });

  it("policy keep: the files stay as they are, the event lists the differences, and the next snapshot holds them", async () => {
    const { stead, dir, id } = await parked();
    const now = listTree(dir);
    const run = await stead.runs.follow(id, [diverge], { ...FAST_FOLLOW, workspace: { policy: "keep" } });
    expect(run.status).toBe("completed");
    expect(run.output).toEqual(now);
    expect(listTree(dir)).toEqual(now);
    const [restored] = await eventsOf(stead, id, "workspace.restored");
    expect(restored?.data).toMatchObject({ action: "kept", changed: ["bin/tool.sh", "src/a.ts"], added: ["scratch.txt"], removed: ["src/b.ts"] });
    const look = (await stead.store.snapshots(id)).find((s) => s.stepId === "look");
    expect(look?.filesChanged).toBe(4);
  });

  it("an emptied directory is restored whole; an untouched one is reported unchanged", async () => {
    const { stead, dir, id, atWrite } = await parked();
    rmSync(dir, { recursive: true });
    mkdirSync(dir);
    const run = await stead.runs.follow(id, [diverge], FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(listTree(dir)).toEqual(atWrite);
    expect((await eventsOf(stead, id, "workspace.restored")).map((e) => e.data.action)).toEqual(["restored"]);

    const other = workspaceDir(SEED);
    const waiting = await stead.run(diverge, other, { ...FAST_FOLLOW, workspace: other });
    expect(waiting.status).toBe("waiting");
    await stead.runs.signal(waiting.id, "go", null);
    expect((await stead.runs.follow(waiting.id, [diverge], FAST_FOLLOW)).status).toBe("completed");
    // The step's files were in its snapshot: they came late from fs.watch here before captures waited
    // for an event barrier (one run in about fifteen, and put-back then removed them).
    const untouched = (await eventsOf(stead, waiting.id, "workspace.restored")).map((e) => ({ action: e.data.action, changed: e.data.changed, added: e.data.added, removed: e.data.removed }));
    expect(untouched).toEqual([{ action: "unchanged", changed: [], added: [], removed: [] }]);
  });

  it("a workspace that cannot be brought back (its path is now a file): the run is held recovery_gap before any step; once fixed, retry restores it", async () => {
    const { stead, dir, id, atWrite } = await parked();
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "not a directory\n");
    const held = await stead.runs.follow(id, [diverge], FAST_FOLLOW);
    expect(held.status).toBe("held");
    const [hold] = await stead.holds.list({ runId: id });
    expect(hold).toMatchObject({ kind: "recovery_gap", status: "open", details: { workspace: dir } });
    expect(hold?.reason).toMatch(/^the workspace .* could not be brought to the run's last completed step: workspace .* is not a directory$/);
    expect((await stead.runs.journal(id)).map((s) => s.id)).not.toContain("look");

    rmSync(dir);
    await stead.runs.release(id, undefined, { choice: "retry", by: "tester" });
    const run = await stead.runs.follow(id, [diverge], FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(run.output).toEqual(atWrite);
    expect((await eventsOf(stead, id, "workspace.restored")).map((e) => e.data.action)).toEqual(["restored"]);
  });
});

describe("settle snapshots during a long step", () => {
  it("once the files are quiet, a settle snapshot of the step in progress is committed; the step's own snapshot follows at its end", async () => {
    const dir = workspaceDir(SEED);
    const gate = deferred();
    const wf = workflow("ws-long", { version: "1" }, async (ctx, root: string) =>
      ctx.step("long", { effect: true }, async () => {
        writeFileSync(join(root, "progress.txt"), "half way\n");
        await gate.promise;
        writeFileSync(join(root, "progress.txt"), "done\n");
        return "ok";
      }),
    );
    const stead = h.create();
    const id = (await stead.runs.start(wf, dir, { workspace: dir })).id;
    const w = h.worker(stead, { definitions: [wf], workspace: { settle: { quietMs: 50, maxWaitMs: 1_000 } } });
    w.start();
    const settle = await waitUntil("a settle snapshot", async () => (await stead.store.snapshots(id)).find((s) => s.source === "settle"));
    expect(settle).toMatchObject({ stepId: "long", filesChanged: 1 });
    expect((await stead.store.journal(id)).find((s) => s.stepId === "long")?.status).toBe("intent");
    gate.resolve();
    await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    const snaps = await stead.store.snapshots(id);
    expect(snaps.map((s) => [s.stepId, s.source])).toEqual([
      [null, "start"],
      ["long", "settle"],
      ["long", "step"],
    ]);
    expect(snaps[2]?.filesChanged).toBe(1);
  });
});

describe("checkpoint metadata", () => {
  const steps = workflow("ws-checkpoints", { version: "1" }, async (ctx, root: string) => {
    await ctx.step("one", { effect: true }, () => writeFileSync(join(root, "one.txt"), "1"));
    await ctx.step("two", () => 2);
    await ctx.step("three", { effect: true }, () => writeFileSync(join(root, "three.txt"), "3"));
    return "ok";
  });

  async function runWith(options: Omit<WorkerOptions, "definitions">): Promise<{ stead: Stead; id: string }> {
    const dir = workspaceDir(SEED);
    const stead = h.create();
    const id = (await stead.runs.start(steps, dir, { workspace: dir })).id;
    const w = h.worker(stead, { definitions: [steps], ...options });
    w.start();
    const run = await stead.runs.waitFor(id, { until: (r) => r.status !== "pending" && r.status !== "running", timeoutMs: 20_000, pollMs: 20 });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    return { stead, id };
  }

  it("is evaluated at each step write and stored with every journal row and beside every snapshot, secret-looking values redacted", async () => {
    let n = 0;
    const { stead, id } = await runWith({
      checkpointMetadata: () => ({ image: "sandbox:v7", n: String(++n), apiToken: "tok-123", db_password: "hunter2", "private-key": "k" }),
    });
    const journal = await stead.store.journal(id);
    expect(journal.map((s) => s.stepId)).toEqual(["one", "two", "three"]);
    const metas = journal.map((s) => JSON.parse(s.checkpoint ?? "null") as Record<string, string>);
    for (const m of metas) expect(m).toMatchObject({ image: "sandbox:v7", apiToken: "[redacted]", db_password: "[redacted]", "private-key": "[redacted]" });
    // Evaluated afresh for each write: later steps carry later values.
    const ns = metas.map((m) => Number(m.n));
    expect(ns[0]).toBeLessThan(ns[1] ?? 0);
    expect(ns[1]).toBeLessThan(ns[2] ?? 0);
    const snaps = await stead.store.snapshots(id);
    expect(snaps.map((s) => s.stepId)).toEqual([null, "one", "two", "three"]);
    for (const s of snaps) expect(JSON.parse(s.checkpoint ?? "null")).toMatchObject({ image: "sandbox:v7", apiToken: "[redacted]" });
    const dump = JSON.stringify({ journal, snaps, events: await stead.store.events({ runId: id }) });
    for (const secret of ["tok-123", "hunter2"]) expect(dump).not.toContain(secret);
  });

  it("a step's snapshot carries the same metadata as the step's journal row it was committed with", async () => {
    let n = 0;
    const { stead, id } = await runWith({ checkpointMetadata: () => ({ n: String(++n) }) });
    const journal = await stead.store.journal(id);
    for (const s of await stead.store.snapshots(id)) {
      if (s.source !== "step") continue;
      const row = journal.find((j) => j.seq === s.seq);
      expect(s.checkpoint, `step ${s.stepId}`).toBe(row?.checkpoint);
    }
  });

  it("a redact option replaces the default", async () => {
    const { stead, id } = await runWith({
      checkpointMetadata: () => ({ image: "sandbox:v7", apiToken: "tok-123" }),
      redact: (text) => text.replace("sandbox:v7", "sandbox:***"),
    });
    for (const s of await stead.store.journal(id)) expect(JSON.parse(s.checkpoint ?? "null")).toEqual({ image: "sandbox:***", apiToken: "tok-123" });
  });

  it("over 4 KB, or not a string map: not stored (a process warning says why), and the run goes on", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    cleanups.push(() => void process.off("warning", onWarning));
    const { stead, id } = await runWith({ checkpointMetadata: () => ({ huge: "x".repeat(5_000) }) });
    for (const s of await stead.store.journal(id)) expect(s.checkpoint).toBeNull();
    for (const s of await stead.store.snapshots(id)) expect(s.checkpoint).toBeNull();
    await waitUntil("the warnings", () => warnings.some((w) => w.includes(id)));
    expect(warnings.filter((w) => w.includes(id)).every((w) => /checkpoint metadata for run .* was not recorded: checkpoint metadata is 50\d\d bytes, over the 4096-byte limit/.test(w))).toBe(true);

    const bad = await runWith({ checkpointMetadata: () => ({ count: 3 }) as unknown as Record<string, string> });
    for (const s of await bad.stead.store.journal(bad.id)) expect(s.checkpoint).toBeNull();
    await waitUntil("the warning", () => warnings.some((w) => w.includes(bad.id) && w.includes('checkpoint metadata "count" is a number')));
  });

  it("costs nothing when absent: no column value on any row", async () => {
    const { stead, id } = await runWith({});
    const journal = await stead.store.journal(id);
    expect(journal.length).toBe(3);
    for (const s of journal) expect(s.checkpoint).toBeNull();
    for (const s of await stead.store.snapshots(id)) expect(s.checkpoint).toBeNull();
  });

  it("createStead's options reach every worker the instance makes", async () => {
    const t = tempDir("stead-ws-defaults-");
    cleanups.push(t.remove);
    const stead = createStead({ store: join(t.dir, "s.db"), checkpointMetadata: () => ({ from: "instance" }) });
    cleanups.push(() => stead.close());
    const dir = workspaceDir(SEED);
    const run = await stead.run(steps, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(run.status).toBe("completed");
    for (const s of await stead.store.journal(run.id)) expect(JSON.parse(s.checkpoint ?? "null")).toEqual({ from: "instance" });
  });
});

describe("a bad workspace path", () => {
  const wf = workflow("ws-nothing", { version: "1" }, () => "ok");

  it.each([
    ["a missing directory", () => "/no/such/dir", /workspace \/no\/such\/dir does not exist/],
    ["a file", (dir: string) => join(dir, "README.md"), /workspace .*README\.md is not a directory/],
  ])("%s: STEAD_BAD_PATH naming the path, and no run is created", async (_what, path, message) => {
    const dir = workspaceDir(SEED);
    const stead = h.create();
    await stead.ready();
    const e = await caught(() => stead.runs.start(wf, null, { workspace: path(dir), id: "never" }));
    expect(e).toMatchObject({ code: "STEAD_BAD_PATH", details: { path: path(dir) } });
    expect((e as Error).message).toMatch(message);
    expect(await stead.store.getRun("never")).toBeUndefined();
    expect((await stead.store.listRuns({})).runs).toEqual([]);
    expect(await stead.store.events({})).toEqual([]);
    const run = await caught(() => stead.run(wf, null, { ...FAST_FOLLOW, workspace: path(dir) }));
    expect(run).toMatchObject({ code: "STEAD_BAD_PATH" });
    expect((await stead.store.listRuns({})).runs).toEqual([]);
  });

  it("stead run --workspace /missing: exit 2, one line, nothing written", async () => {
    requireBuild();
    const t = tempDir("stead-ws-cli-");
    cleanups.push(t.remove);
    const store = join(t.dir, "s.db");
    const r = await cli(["run", join(FIXTURES, "two.ts"), "--workflow", "cli-beta", "--workspace", "/no/such/dir", "--store", store], t.dir);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^stead: workspace \/no\/such\/dir does not exist — /);
    if (existsSync(store)) for (const [table, rows] of Object.entries(dumpStore(store))) if (table !== "schema_migrations") expect(rows, table).toEqual([]);

    // The same command with a real directory runs, and records the absolute path.
    const dir = workspaceDir(SEED);
    const ok = await cli(["run", join(FIXTURES, "two.ts"), "--workflow", "cli-beta", "--workspace", dir, "--store", store], t.dir);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`, workspace ${dir}`);
    const s = new SqliteStore({ path: store });
    cleanups.push(() => s.close());
    expect((await s.listRuns({})).runs.map((r) => r.workspace)).toEqual([dir]);
  });
});

/** The store, with `before(method)` called ahead of the named methods: the outside world acting mid-capture. */
function interposed(store: Store, before: (method: string) => void | Promise<void>, methods: readonly string[]): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      const f = v as (...args: unknown[]) => unknown;
      if (typeof prop === "string" && methods.includes(prop)) {
        return async (...args: unknown[]) => {
          await before(prop);
          return f.apply(target, args);
        };
      }
      return f.bind(target);
    },
  });
}

describe("gaps: a capture that could not look never fails the run", () => {
  it("a file that vanishes while the step's capture runs: a workspace.gap event names it, the snapshot leaves it out, the run completes", async () => {
    const dir = workspaceDir(SEED);
    const t = tempDir("stead-ws-gap-");
    cleanups.push(t.remove);
    const real = new SqliteStore({ path: join(t.dir, "s.db") });
    let armed = false;
    // The capture reads files in name order and asks the store about each 8 MB of new content:
    // between `a-big.bin` and `b-gone.txt` the file goes away.
    const store = interposed(
      real,
      () => {
        if (armed && existsSync(join(dir, "b-gone.txt"))) {
          armed = false;
          rmSync(join(dir, "b-gone.txt"));
        }
      },
      ["missingBlobs"],
    );
    const stead = createStead({ store });
    cleanups.push(() => stead.close());
    const wf = workflow("ws-vanish", { version: "1" }, async (ctx, root: string) => {
      await ctx.step("write", { effect: true }, () => {
        writeFileSync(join(root, "a-big.bin"), Buffer.alloc(9 * 1024 * 1024, 7));
        writeFileSync(join(root, "b-gone.txt"), "here, then not\n");
        armed = true;
        return "ok";
      });
      return ctx.step("after", { effect: true }, () => "went on");
    });
    const run = await stead.run(wf, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("went on");
    const gaps = await eventsOf(stead, run.id, "workspace.gap");
    expect(gaps.map((e) => e.data)).toEqual([{ seq: 0, step: "write", source: "step", paths: ["b-gone.txt: vanished while it was read"], count: 1 }]);
    const snap = (await stead.store.snapshots(run.id)).find((s) => s.stepId === "write");
    expect(snap?.files).toBe(4);
  });

  it("a workspace that is gone when the step ends, or a store that fails the upload: a gap event with the reason, no snapshot of that step, the run completes", async () => {
    const dir = workspaceDir(SEED);
    const t = tempDir("stead-ws-gap-");
    cleanups.push(t.remove);
    let failUpload = false;
    const store = interposed(
      new SqliteStore({ path: join(t.dir, "s.db") }),
      (method) => {
        if (method === "putBlobs" && failUpload) {
          failUpload = false;
          throw new Error("blob store unavailable");
        }
      },
      ["putBlobs"],
    );
    const stead = createStead({ store });
    cleanups.push(() => stead.close());
    const wf = workflow("ws-gone", { version: "1" }, async (ctx, root: string) => {
      await ctx.step("upload-fails", { effect: true }, () => {
        writeFileSync(join(root, "new.txt"), "new content\n");
        failUpload = true;
      });
      await ctx.step("remove-all", { effect: true }, () => rmSync(root, { recursive: true }));
      await ctx.step("recreate", { effect: true }, () => {
        mkdirSync(root);
        writeFileSync(join(root, "again.txt"), "again\n");
      });
      return "went on";
    });
    const run = await stead.run(wf, dir, { ...FAST_FOLLOW, workspace: dir });
    expect(run.status, JSON.stringify(run.error)).toBe("completed");
    const gaps = (await eventsOf(stead, run.id, "workspace.gap")).map((e) => e.data);
    expect(gaps).toEqual([
      { seq: 0, step: "upload-fails", source: "step", reason: "blob store unavailable", workspace: dir },
      { seq: 1, step: "remove-all", source: "step", reason: `workspace ${dir} does not exist`, workspace: dir },
    ]);
    const snaps = await stead.store.snapshots(run.id);
    expect(snaps.map((s) => s.stepId)).toEqual([null, "recreate"]);
    expect(snaps[1]?.files).toBe(1);
  });
});
