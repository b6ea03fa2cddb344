/**
 * The control API calls a skin uses instead of the store, on both stores: a run's workspace
 * (snapshots, restore, diff, gc), a session's transcript and latest turn, the store's location and
 * version, and dumps. Results are checked against the rows in the database and the files on disk.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { agent, isSteadError, lastUserText, scriptedModel, workflow, type Stead } from "../src/index.js";
import { VerifiedDump } from "../src/stead/transfer.js";
import { BOTH_STORES, onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { tempDir } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";
import { listTree } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function store(kind: (typeof STORE_KINDS)[number], label: string): Promise<OnStore> {
  const s = await onStore(kind, label);
  cleanups.push(() => s.cleanup());
  return s;
}

function dir(): string {
  const d = tempDir("stead-control-api-");
  cleanups.push(d.remove);
  return d.dir;
}

/** Writes a.txt, then b.txt and a changed a.txt, each in an effect step (each snapshotted). */
const editor = workflow("editor", async (ctx, root: string) => {
  await ctx.step("first", { effect: true }, () => writeFileSync(join(root, "a.txt"), "one"));
  await ctx.step("second", { effect: true }, () => {
    writeFileSync(join(root, "a.txt"), "two");
    writeFileSync(join(root, "b.txt"), "b");
  });
  return "edited";
});

const chat = agent("chat-reads", { model: scriptedModel({ respond: (prompt) => ({ text: `ANSWER to ${lastUserText(prompt)}` }) }), instructions: "Be brief." });

/** Everything a refused call could have changed, read from the database. */
const counts = (s: OnStore) => s.rows("SELECT (SELECT COUNT(*) FROM runs) AS runs, (SELECT COUNT(*) FROM events) AS events, (SELECT COUNT(*) FROM snapshots) AS snapshots");

async function notFound(p: Promise<unknown>): Promise<string> {
  const e = await caught(() => p);
  return isSteadError(e) ? e.code : String(e);
}

describe.each(STORE_KINDS)("the control API's reads and transfers (%s)", (kind) => {
  it("a run's snapshots, one restored into a new directory, the diff of two steps, and gc", async () => {
    const s = await store(kind, "reads-ws");
    const stead: Stead = s.stead;
    const workspace = join(dir(), "repo");
    mkdirSync(workspace);
    const run = await stead.run(editor, workspace, { workspace, pollMs: 10 });
    expect(run.status).toBe("completed");

    const snaps = await stead.workspaces.snapshots(run.id);
    const rows = await s.rows("SELECT seq, step_id, source, files FROM snapshots WHERE run_id = ? ORDER BY id", run.id);
    expect(snaps.runId).toBe(run.id);
    expect(snaps.workspace).toBe(workspace);
    expect(snaps.snapshots.map((x) => ({ seq: x.seq, step_id: x.stepId, source: x.source, files: x.files }))).toEqual(rows.map((r) => ({ ...r, seq: Number(r.seq), files: Number(r.files) })));
    expect(snaps.snapshots.map((x) => x.notes)).toEqual(rows.map(() => ({ notes: [] })));

    const target = join(dir(), "after-first");
    const restored = await stead.workspaces.restore(run.id, { step: "first", to: target });
    expect(restored).toMatchObject({ runId: run.id, target, files: 1, snapshot: { stepId: "first", source: "step" } });
    expect(Object.keys(listTree(target))).toEqual(["a.txt"]);
    expect(readFileSync(join(target, "a.txt"), "utf8")).toBe("one");

    expect(await stead.workspaces.diff(run.id, "first", "second")).toEqual({ added: ["b.txt"], changed: ["a.txt"], removed: [] });
    expect(await stead.workspaces.diff(run.id, "start", "second")).toEqual({ added: ["a.txt", "b.txt"], changed: [], removed: [] });

    const gc = await stead.admin.gc({ keepSteps: 1, graceMs: 0 });
    const left = await s.rows("SELECT step_id FROM snapshots WHERE run_id = ? AND source = 'step'", run.id);
    expect(left).toEqual([{ step_id: "second" }]);
    expect(gc.snapshotsDeleted).toBe(rows.length - 1);

    const before = await counts(s);
    const missing = join(dir(), "none");
    expect(await notFound(stead.workspaces.snapshots("no-such-run"))).toBe("STEAD_RUN_NOT_FOUND");
    expect(await notFound(stead.workspaces.restore("no-such-run", { to: missing }))).toBe("STEAD_RUN_NOT_FOUND");
    expect(await notFound(stead.workspaces.restore(run.id, { step: "nope", to: missing }))).toBe("STEAD_SNAPSHOT_NOT_FOUND");
    expect(await notFound(stead.workspaces.diff(run.id, "first", "second"))).toBe("STEAD_SNAPSHOT_NOT_FOUND");
    expect(await counts(s)).toEqual(before);
    rmSync(missing, { recursive: true, force: true });
  });

  it("a snapshot's files and their contents, read from the store without writing anything", async () => {
    const s = await store(kind, "reads-files");
    const stead = s.stead;
    const workspace = join(dir(), "repo");
    mkdirSync(workspace);
    const binary = Buffer.from([0, 1, 2, 255, 254, 10]);
    const files = workflow("files", async (ctx, root: string) => {
      await ctx.step("write", { effect: true }, () => {
        writeFileSync(join(root, "notes.md"), "héllo\n");
        mkdirSync(join(root, "src"));
        writeFileSync(join(root, "src", "big.txt"), "x".repeat(5000));
        writeFileSync(join(root, "src", "blob.bin"), binary);
        symlinkSync("notes.md", join(root, "link"));
      });
      return "ok";
    });
    const run = await stead.run(files, workspace, { workspace, pollMs: 10 });
    expect(run.status).toBe("completed");
    const before = await counts(s);

    const all = await stead.workspaces.files(run.id, { step: "write" });
    expect(all.snapshot).toMatchObject({ stepId: "write", source: "step" });
    expect(all.files.map((f) => f.path)).toEqual(["link", "notes.md", "src/big.txt", "src/blob.bin"]);
    const byPath = Object.fromEntries(all.files.map((f) => [f.path, f]));
    expect(byPath.link).toMatchObject({ kind: "link", target: "notes.md", content: null });
    expect(byPath["notes.md"]).toMatchObject({ kind: "file", size: Buffer.byteLength("héllo\n"), encoding: "utf8", content: "héllo\n" });
    expect(byPath["notes.md"]?.hash).toBe(createHash("sha256").update("héllo\n").digest("hex"));
    expect(byPath["src/blob.bin"]).toMatchObject({ encoding: "base64", content: binary.toString("base64") });
    expect(byPath["src/big.txt"]?.content).toBe("x".repeat(5000));
    expect(all.omitted).toBe(0);

    // A budget: files whose content would pass it are listed without it, and counted.
    const small = await stead.workspaces.files(run.id, { step: "write", maxBytes: 100 });
    expect(small.files.find((f) => f.path === "src/big.txt")).toMatchObject({ content: null, encoding: null, size: 5000 });
    expect(small.files.find((f) => f.path === "notes.md")?.content).toBe("héllo\n");
    expect(small.omitted).toBe(1);

    // One path, or a directory's; without contents; the start snapshot has none of them.
    expect((await stead.workspaces.files(run.id, { step: "write", paths: ["src"] })).files.map((f) => f.path)).toEqual(["src/big.txt", "src/blob.bin"]);
    expect((await stead.workspaces.files(run.id, { step: "write", paths: ["notes.md"], content: false })).files).toEqual([
      { path: "notes.md", kind: "file", mode: byPath["notes.md"]?.mode, size: 7, hash: byPath["notes.md"]?.hash, target: null, encoding: null, content: null },
    ]);
    expect((await stead.workspaces.files(run.id, { seq: -1 })).files).toEqual([]);

    expect(await notFound(stead.workspaces.files("no-such-run"))).toBe("STEAD_RUN_NOT_FOUND");
    expect(await notFound(stead.workspaces.files(run.id, { step: "nope" }))).toBe("STEAD_SNAPSHOT_NOT_FOUND");
    expect(await notFound(stead.workspaces.files(run.id, { maxBytes: -1 }))).toBe("STEAD_BAD_OPTION");
    expect(await notFound(stead.workspaces.files(run.id, { paths: ["../etc"] }))).toBe("STEAD_BAD_OPTION");
    expect(await counts(s)).toEqual(before);
  });

  it("a session's transcript and latest turn, rebuilt from its runs and journals", async () => {
    const s = await store(kind, "reads-session");
    const stead = s.stead;
    const session = stead.session(chat, "support-7");
    await session.send("hello");
    await session.send("and then?");
    const worker = stead.worker({ definitions: [chat], pollMs: 10 });
    worker.start();
    const [, second] = await session.turns();
    await stead.runs.waitFor(second?.id ?? "", { timeoutMs: 20_000 });
    await worker.stop();

    const rows = await s.rows("SELECT id, turn, definition, module FROM runs WHERE session_id = ? ORDER BY turn", "support-7");
    const last = rows[rows.length - 1];
    expect(await stead.sessions.lastTurn("support-7")).toMatchObject({ id: last?.id, turn: 2, definition: "chat-reads", module: last?.module, status: "completed" });
    expect(await stead.sessions.lastTurn("no-such-session")).toBeNull();

    const t = await stead.sessions.transcript("support-7");
    expect(t.session).toBe("support-7");
    expect(t.definition).toBe("chat-reads");
    expect(t.turns.map((x) => ({ runId: x.runId, turn: x.turn, outcome: x.outcome, entries: x.entries.map((e) => e.type) }))).toEqual(
      rows.map((r) => ({ runId: r.id, turn: Number(r.turn), outcome: "completed", entries: ["user", "model"] })),
    );
    expect(t.turns.map((x) => x.entries.find((e) => e.type === "model"))).toMatchObject([{ text: "ANSWER to hello" }, { text: "ANSWER to and then?" }]);
    expect(await notFound(stead.sessions.transcript("no-such-session"))).toBe("STEAD_SESSION_NOT_FOUND");
  });

  it.skipIf(!BOTH_STORES)("the store's location and version, and a dump exported from it and imported into a fresh store of the other kind", async () => {
    const s = await store(kind, "reads-export");
    const stead = s.stead;
    const [version] = await s.rows("SELECT MAX(version) AS v FROM stead_migrations");
    const info = await stead.admin.storeInfo();
    expect(info).toMatchObject({ dialect: kind, schemaVersion: Number(version?.v) });
    expect(stead.location).toBe(info.location);
    if (kind === "sqlite") expect(stead.location).toBe(s.location);

    const workspace = join(dir(), "repo");
    mkdirSync(workspace);
    await stead.run(editor, workspace, { workspace, pollMs: 10 });

    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    const exported = await stead.admin.exportDump(out);
    out.end();
    expect(exported.tables.runs.rows).toBe(1);

    const other = await store(kind === "sqlite" ? "postgres" : "sqlite", "reads-import");
    const dump = await VerifiedDump.from(() => Readable.from([Buffer.concat(chunks)]), "the dump");
    cleanups.push(() => dump.dispose());
    const imported = await other.stead.admin.importDump(dump);
    expect(imported.tables).toEqual(exported.tables);
    const read = async (x: OnStore) => x.rows("SELECT id, status, definition FROM runs ORDER BY id");
    expect(await read(other)).toEqual(await read(s));
    const snapshotCount = async (x: OnStore) => Number((await x.rows("SELECT COUNT(*) AS n FROM snapshots"))[0]?.n);
    expect(await snapshotCount(other)).toBe(await snapshotCount(s));
    expect(await snapshotCount(s)).toBeGreaterThan(0);
  });
});
