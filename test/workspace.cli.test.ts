/**
 * `stead snapshots`, `restore`, `diff` and `gc` through the real CLI (built, spawned) on a store
 * whose run has workspace snapshots; and their refusals: exit 2, one line, nothing written.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { WorkspaceTracker, type CaptureResult } from "../src/workspace/index.js";
import { cli, dumpStore, lines, requireBuild, tempDir } from "./cli-helpers.js";
import { commitCapture, listTree, newRun, writeTree } from "./helpers/workspace.js";

beforeAll(() => requireBuild());

let dir: string;
let db: string;
let repo: string;
let store: string[];
const states: Record<string, string>[] = [];

beforeAll(async () => {
  dir = tempDir("stead-ws-cli-");
  db = join(dir, "s.db");
  repo = join(dir, "repo");
  store = ["--store", db];
  const s = new SqliteStore({ path: db });
  await s.migrate();
  writeTree(repo, { "README.md": "# repo\n", "src/app.ts": "let x = 1;\n", "big.bin": Buffer.alloc(3000, 9) });
  await s.createRun(newRun("run-1", repo), []);
  await s.createRun(newRun("bare", null), []);
  const t = await WorkspaceTracker.open(s, "run-1", repo, { maxFileBytes: 2048 });
  const commit = async (r: CaptureResult) => {
    await commitCapture(s, "run-1", r);
    t.committed(r);
    states.push(listTree(repo, ["big.bin"]));
  };
  await commit(await t.capture({ seq: -1, stepId: null, source: "start" }));
  writeFileSync(join(repo, "src/app.ts"), "let x = 2;\n");
  writeTree(repo, { "src/new.ts": "new\n" });
  await commit(await t.capture({ seq: 0, stepId: "edit", source: "step" }));
  rmSync(join(repo, "README.md"));
  await commit(await t.capture({ seq: 1, stepId: "cleanup", source: "step" }));
  await s.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Before the gc case below, which prunes the run's older snapshots.
describe("refusals: exit 2, one line naming the fix, nothing written", () => {
  const cases: [string, () => string[], RegExp][] = [
    ["an unknown run", () => ["snapshots", "nope"], /^stead: no run with id nope — list runs with `stead ps`$/],
    ["a step with no snapshot", () => ["restore", "run-1", "--step", "deploy", "--to", join(dir, "x1")], /^stead: run run-1 has no workspace snapshot of step "deploy" — pick one of its snapshots .*: start, edit, cleanup$/],
    ["a seq with no snapshot", () => ["restore", "run-1", "--seq", "7", "--to", join(dir, "x2")], /^stead: run run-1 has no workspace snapshot of journal position 7 — /],
    ["a target that is not empty", () => ["restore", "run-1", "--to", repo], /^stead: restore target .*repo is not empty — pass --to a new or empty directory/],
    ["a target that is a file", () => ["restore", "run-1", "--to", join(repo, "src", "app.ts")], /^stead: restore target .*app\.ts is not a directory — /],
    ["a run without a workspace and no --to", () => ["restore", "bare"], /^stead: run bare has no workspace snapshots of any step — |^stead: run bare has no workspace snapshot of any step — /],
    ["--step and --seq together", () => ["restore", "run-1", "--step", "edit", "--seq", "0"], /^stead: --step and --seq both name a snapshot — pass one of them$/],
    ["a bad --seq", () => ["restore", "run-1", "--seq", "two"], /^stead: --seq must be a whole number of at least -1, not "two"/],
    ["a diff step with no snapshot", () => ["diff", "run-1", "edit", "nope"], /^stead: run run-1 has no workspace snapshot of step "nope" — /],
    ["a bad --keep-steps", () => ["gc", "--keep-steps", "-1"], /^stead: --keep-steps must be a whole number of at least 0, not "-1"/],
  ];

  it.each(cases)("%s", async (_name, args, message) => {
    const before = dumpStore(db);
    const files = readdirSync(dir).sort();
    const repoBefore = listTree(repo);
    const r = await cli([...args(), ...store], dir);
    expect(r.code).toBe(2);
    const err = lines(r.stderr);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
    expect(r.stdout).toBe("");
    expect(dumpStore(db)).toEqual(before);
    expect(readdirSync(dir).sort()).toEqual(files);
    expect(listTree(repo)).toEqual(repoBefore);
  });
});

describe("stead snapshots / restore / diff / gc", () => {
  it("snapshots lists each snapshot with seq, step, source, files changed and notes; --json gives the rows", async () => {
    const r = await cli(["snapshots", "run-1", ...store], dir);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toBe(`workspace ${repo}`);
    expect(out[1]).toMatch(/^SEQ\s+STEP\s+SOURCE\s+CHANGED\s+FILES\s+SIZE\s+NOTES\s+AGE$/);
    expect(out.slice(2, 5).map((l) => l.split(/\s{2,}/).slice(0, 7))).toEqual([
      ["-1", "-", "start", "2", "2", "18 B", "1 skipped"],
      ["0", "edit", "step", "2", "3", "22 B", "1 skipped"],
      ["1", "cleanup", "step", "1", "2", "15 B", "1 skipped"],
    ]);
    // What was skipped is named in the human output too, not only in --json.
    expect(out.slice(5)).toEqual(["files a snapshot has no content for:", "  big.bin: skipped, too large (3000 bytes, over the 2048-byte ceiling) — seq -1, 0, 1"]);
    const json = await cli(["snapshots", "run-1", "--json", ...store], dir);
    const rows = JSON.parse(json.stdout) as { seq: number; stepId: string | null; source: string; filesChanged: number; notes: { notes: { path: string; kind: string }[] } }[];
    expect(rows.map((x) => [x.seq, x.stepId, x.source, x.filesChanged])).toEqual([
      [-1, null, "start", 2],
      [0, "edit", "step", 2],
      [1, "cleanup", "step", 1],
    ]);
    expect(rows[0]?.notes.notes).toEqual([{ path: "big.bin", kind: "too-large", detail: "3000 bytes, over the 2048-byte ceiling" }]);
    const none = await cli(["snapshots", "bare", ...store], dir);
    expect(none.stdout).toBe("run bare has no workspace snapshots (it was started without a workspace)\n");
  });

  it("restore writes the chosen snapshot into a new directory (by step, by seq, the latest by default)", async () => {
    const byStep = join(dir, "by-step");
    const r = await cli(["restore", "run-1", "--step", "edit", "--to", byStep, ...store], dir);
    expect(r.stderr).toBe("");
    expect(lines(r.stdout)).toEqual([
      `restored run run-1 after step "edit" (seq 0, step) into ${byStep}: 3 files`,
      "not restored (the snapshot has no content for them):",
      "  big.bin: skipped, too large (3000 bytes, over the 2048-byte ceiling)",
    ]);
    expect(listTree(byStep)).toEqual(states[1]);
    const bySeq = join(dir, "by-seq");
    expect((await cli(["restore", "run-1", "--seq", "-1", "--to", bySeq, ...store], dir)).code).toBe(0);
    expect(listTree(bySeq)).toEqual(states[0]);
    const latest = join(dir, "latest");
    mkdirSync(latest);
    expect((await cli(["restore", "run-1", "--to", latest, ...store], dir)).code).toBe(0);
    expect(listTree(latest)).toEqual(states[2]);
  });

  it("restore without --to writes into the run's workspace path when it is gone", async () => {
    const moved = join(dir, "repo-moved");
    const { renameSync } = await import("node:fs");
    renameSync(repo, moved);
    try {
      const r = await cli(["restore", "run-1", ...store], dir);
      expect(r.code).toBe(0);
      expect(listTree(repo)).toEqual(states[2]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
      renameSync(moved, repo);
    }
  });

  it("diff lists added, changed and removed files between two steps", async () => {
    const r = await cli(["diff", "run-1", "start", "cleanup", ...store], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("A src/new.ts\nM src/app.ts\nD README.md\n1 added, 1 changed, 1 removed\n");
    const json = await cli(["diff", "run-1", "edit", "cleanup", "--json", ...store], dir);
    expect(JSON.parse(json.stdout)).toEqual({ added: [], changed: [], removed: ["README.md"] });
  });

  it("gc deletes unreferenced blobs past the grace period; with --keep-steps it prunes finished runs first", async () => {
    const keep = await cli(["gc", "--json", ...store], dir);
    expect(JSON.parse(keep.stdout)).toMatchObject({ snapshotsDeleted: 0, blobsDeleted: 0 });
    // run-1 is still live: --keep-steps leaves it whole.
    const live = await cli(["gc", "--keep-steps", "1", "--grace", "0", ...store], dir);
    expect(live.stdout).toMatch(/^deleted 0 snapshots and 0 blobs \(0 B\); \d+ blobs still referenced\nerased: no deleted row's bytes are left in the store file or its -wal\n$/);
    const s = new SqliteStore({ path: db });
    await s.commit([[{ runId: "run-1", run: { status: "completed" } }]]);
    await s.close();
    const pruned = await cli(["gc", "--keep-steps", "1", "--grace", "0", "--json", ...store], dir);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ snapshotsDeleted: 2, blobsDeleted: 5 });
    const after = await cli(["snapshots", "run-1", "--json", ...store], dir);
    expect((JSON.parse(after.stdout) as { stepId: string }[]).map((x) => x.stepId)).toEqual(["cleanup"]);
    const out = join(dir, "after-gc");
    expect((await cli(["restore", "run-1", "--to", out, ...store], dir)).code).toBe(0);
    expect(listTree(out)).toEqual(states[2]);
  });
});

describe("restore --to: directory and file modes", () => {
  let d: string;
  let db2: string;

  beforeAll(async () => {
    d = tempDir("stead-ws-modes-");
    db2 = join(d, "s.db");
    const src = join(d, "src-repo");
    writeTree(src, { "run.sh": { content: "#!/bin/sh\n", mode: 0o755 }, "private.txt": { content: "k", mode: 0o600 }, "lib/a.txt": { content: "a", mode: 0o644 } });
    chmodSync(join(src, "lib"), 0o711);
    const s = new SqliteStore({ path: db2 });
    await s.migrate();
    await s.createRun(newRun("m-1", src), []);
    const t = await WorkspaceTracker.open(s, "m-1", src, {});
    await commitCapture(s, "m-1", await t.capture({ seq: 0, stepId: "s", source: "step" }));
    await s.close();
  });

  afterAll(() => rmSync(d, { recursive: true, force: true }));

  const mode = (p: string) => (statSync(p).mode & 0o7777).toString(8);

  it.each([
    ["022", "755"],
    ["027", "750"],
    ["077", "700"],
  ])("under umask %s the directories restore creates get mode %s; the snapshot's files and directories keep their recorded modes", async (umask, want) => {
    const to = join(d, `new-${umask}`, "deeper", "out");
    const r = await cli(["restore", "m-1", "--to", to, "--store", db2], d, { umask });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect([mode(join(d, `new-${umask}`)), mode(join(d, `new-${umask}`, "deeper")), mode(to)]).toEqual([want, want, want]);
    expect([mode(join(to, "lib")), mode(join(to, "run.sh")), mode(join(to, "private.txt")), mode(join(to, "lib", "a.txt"))]).toEqual(["711", "755", "600", "644"]);
  });

  it("an existing empty target directory keeps its own mode", async () => {
    const to = join(d, "existing");
    mkdirSync(to);
    chmodSync(to, 0o751);
    const r = await cli(["restore", "m-1", "--to", to, "--store", db2], d, { umask: "022" });
    expect(r.code).toBe(0);
    expect(mode(to)).toBe("751");
    expect(mode(join(to, "run.sh"))).toBe("755");
  });
});
