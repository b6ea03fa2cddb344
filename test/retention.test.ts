/**
 * Retention on both stores, with real runs: finished run trees older than the cut-off go whole
 * (their rows and the workspace blobs only they used), while a run not finished, a finished child
 * whose parent still waits, a run finished since the cut-off, and a blob another run still refers
 * to all stay, checked from the database's rows and by restoring the survivor's workspace. Time
 * passing is simulated by moving runs' `updated_at` back, behind Stead's back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { decodeBlob } from "../src/workspace/blob-codec.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { FAST_WORKER } from "./helpers/temp-store.js";
import { cli, requireBuild } from "./cli-helpers.js";

const DAY = 86_400_000;

const kid = workflow("ret-kid", { version: "1" }, async (ctx) => ctx.step("k", () => "kid done"));
const parent = workflow("ret-parent", { version: "1" }, async (ctx, input: { file: string; text: string; wait: boolean }) => {
  await ctx.step("write", { effect: true, retry: "always" }, (info) => {
    writeFileSync(join(input.file), input.text);
    return info.stepId;
  });
  const k = await ctx.child("kid", kid, null);
  if (input.wait) await ctx.approval("go");
  return k;
});

/** Blob contents, decoded, as the store holds them. */
async function blobTexts(s: OnStore): Promise<string[]> {
  const rows = await s.rows("SELECT hash, data FROM blobs");
  return rows.map((r) => decodeBlob(String(r.hash), Buffer.from(r.data as Uint8Array)).toString("utf8"));
}

const ids = async (s: OnStore, table: string, column = "run_id") => [...new Set((await s.rows(`SELECT ${column} AS id FROM ${table}`)).map((r) => String(r.id)))].sort();

describe.each(STORE_KINDS)("retention on %s", (kind) => {
  let s: OnStore | undefined;
  const dirs: string[] = [];
  const ws = () => {
    const d = mkdtempSync(join(tmpdir(), "stead-ret-ws-"));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("deletes old finished trees and the blobs only they used; keeps what is not finished, what finished since, and shared blobs", async () => {
    s = await onStore(kind, "retention");
    const { stead } = s;
    const w = stead.worker({ definitions: [parent, kid], ...FAST_WORKER });
    w.start();
    const [wa, wb, wc, wd] = [ws(), ws(), ws(), ws()];
    try {
      await stead.runs.start(parent, { file: join(wa, "a.txt"), text: "only-in-old-run-a", wait: false }, { id: "old-a", workspace: wa });
      await stead.runs.start(parent, { file: join(wb, "s.txt"), text: "shared-by-old-b-and-new-c", wait: false }, { id: "old-b", workspace: wb });
      await stead.runs.start(parent, { file: join(wc, "s.txt"), text: "shared-by-old-b-and-new-c", wait: false }, { id: "new-c", workspace: wc });
      await stead.runs.start(parent, { file: join(wd, "d.txt"), text: "waiting-run-d", wait: true }, { id: "waits-d", workspace: wd });
      for (const id of ["old-a", "old-b", "new-c"]) expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
      await stead.runs.waitFor("waits-d", { timeoutMs: 20_000, until: (r) => r.status === "waiting" });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    const kids = Object.fromEntries((await s.rows("SELECT id, parent_id FROM runs WHERE parent_id IS NOT NULL")).map((r) => [String(r.parent_id), String(r.id)]));
    // Two days pass for every run but new-c; waits-d still waits for its approval.
    for (const id of ["old-a", "old-b", "waits-d", kids["old-a"], kids["old-b"], kids["waits-d"]]) await s.write("UPDATE runs SET updated_at = ? WHERE id = ?", Date.now() - 2 * DAY, id);
    expect(await blobTexts(s)).toEqual(expect.arrayContaining(["only-in-old-run-a", "shared-by-old-b-and-new-c", "waiting-run-d"]));

    const r = await stead.runs.deleteFinished({ finishedBefore: "1d", graceMs: 0 });
    expect(r.runs).toBe(4);

    const survivors = ["new-c", kids["new-c"], "waits-d", kids["waits-d"]].map(String).sort();
    expect(await ids(s, "runs", "id")).toEqual(survivors);
    for (const table of ["steps", "waits", "snapshots"]) {
      for (const id of await ids(s, table)) expect(survivors, `${table} row of ${id}`).toContain(id);
    }
    // Of a deleted run, one event stays: its run.pruned, which tells a follower it is gone.
    const left = (await s.rows("SELECT run_id, type FROM events")).filter((e) => !survivors.includes(String(e.run_id)));
    expect(left.map((e) => `${String(e.run_id)} ${String(e.type)}`).sort()).toEqual(["old-a", "old-b", kids["old-a"], kids["old-b"]].map((id) => `${String(id)} run.pruned`).sort());
    const blobs = await blobTexts(s);
    expect(blobs).not.toContain("only-in-old-run-a");
    expect(blobs).toEqual(expect.arrayContaining(["shared-by-old-b-and-new-c", "waiting-run-d"]));
    const back = join(ws(), "restored");
    await stead.workspaces.restore("new-c", { to: back });
    expect(readFileSync(join(back, "s.txt"), "utf8")).toBe("shared-by-old-b-and-new-c");

    // The waiting run and its finished child carry on.
    await stead.runs.approve("waits-d", "go", { by: "ann" });
    const w2 = stead.worker({ definitions: [parent, kid], ...FAST_WORKER });
    w2.start();
    try {
      expect((await stead.runs.waitFor("waits-d", { timeoutMs: 20_000 })).output).toBe("kid done");
    } finally {
      await w2.stop({ graceMs: 500 });
    }
  }, 60_000);
});

describe("stead gc --finished-before", () => {
  let s: OnStore | undefined;
  beforeAll(() => requireBuild());
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("keeps a summary when asked, says what it did, and refuses a cut-off under a minute or --keep-summary alone", async () => {
    s = await onStore("sqlite", "retention-cli");
    const w = s.stead.worker({ definitions: [parent, kid], ...FAST_WORKER });
    w.start();
    const d = mkdtempSync(join(tmpdir(), "stead-ret-cli-"));
    try {
      await s.stead.runs.start(parent, { file: join(d, "x.txt"), text: "x", wait: false }, { id: "sum-1" });
      await s.stead.runs.waitFor("sum-1", { timeoutMs: 20_000 });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    await s.write("UPDATE runs SET updated_at = ?", Date.now() - 2 * DAY);
    for (const bad of [["--finished-before", "10s"], ["--keep-summary"]]) {
      const r = await cli(["gc", ...bad, "--store", s.location], d);
      expect(r.code, r.stderr).toBe(2);
    }
    expect(await ids(s, "steps")).not.toEqual([]);
    const r = await cli(["gc", "--finished-before", "1d", "--keep-summary", "--store", s.location], d);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/reduced to a summary 2 finished run\(s\) older than 1d/);
    expect((await s.rows("SELECT id, status, output FROM runs ORDER BY id")).map((x) => [x.status, x.output])).toEqual([
      ["completed", JSON.stringify("kid done")],
      ["completed", JSON.stringify("kid done")],
    ]);
    expect(await ids(s, "steps")).toEqual([]);
    expect((await s.rows("SELECT DISTINCT type FROM events")).map((x) => x.type)).toEqual(["run.pruned"]);
    rmSync(d, { recursive: true, force: true });
  }, 60_000);
});
