/**
 * Issue 39, item 14: a restore never makes a setuid or setgid file (or a setgid directory) unless
 * asked. A snapshot records modes as captured, and a store can be edited: restored as root, a
 * recorded 04755 would be a root-owned setuid program. `stead restore` writes the modes without
 * those bits (sticky stays); `--keep-special-bits` keeps them. A worker putting a resumed run's
 * workspace back does the same (`workspace.keepSpecialBits`), and the snapshot tarball the server
 * serves never carries them. On both stores.
 */
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../../src/index.js";
import { cli, requireBuild } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen } from "../../src/server/listen.js";

const modeOf = (path: string): string => (statSync(path).mode & 0o7777).toString(8).padStart(4, "0");

/** Files and directories with special bits, made by a step (the capture after it records their modes). */
const special = workflow("special-bits", { version: "1" }, async (ctx, root: string) => {
  await ctx.step("make", { effect: true }, () => {
    writeFileSync(join(root, "setuid.sh"), "#!/bin/sh\nid\n");
    chmodSync(join(root, "setuid.sh"), 0o4755);
    writeFileSync(join(root, "setgid.sh"), "#!/bin/sh\nid\n");
    chmodSync(join(root, "setgid.sh"), 0o2755);
    writeFileSync(join(root, "plain.sh"), "#!/bin/sh\n");
    chmodSync(join(root, "plain.sh"), 0o755);
    mkdirSync(join(root, "shared"));
    chmodSync(join(root, "shared"), 0o2775);
    mkdirSync(join(root, "sticky"));
    chmodSync(join(root, "sticky"), 0o1777);
  });
  await ctx.approval("go");
  // After the resume: what the worker put back.
  return ctx.step("look", () => ({ setuid: modeOf(join(root, "setuid.sh")), setgid: modeOf(join(root, "setgid.sh")), shared: modeOf(join(root, "shared")) }));
});

const AS_RECORDED = { "setuid.sh": "4755", "setgid.sh": "2755", "plain.sh": "0755", shared: "2775", sticky: "1777" };
const STRIPPED = { "setuid.sh": "0755", "setgid.sh": "0755", "plain.sh": "0755", shared: "0775", sticky: "1777" };
const modesIn = (dir: string) => Object.fromEntries(Object.keys(AS_RECORDED).map((name) => [name, modeOf(join(dir, name))]));

describe.skipIf(process.platform === "win32").each(STORE_KINDS)("special bits on restore (%s)", (kind) => {
  let s: OnStore;
  let dir: { dir: string; remove: () => void };
  let ws = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-special-bits-");
    ws = join(dir.dir, "ws");
    mkdirSync(ws);
    s = await onStore(kind, "special-bits");
    const w = s.stead.worker({ definitions: [special], ...FAST_WORKER });
    w.start();
    try {
      await s.stead.runs.start(special, ws, { id: "sb", workspace: ws });
      await s.stead.runs.waitFor("sb", { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    expect(modesIn(ws), "the workspace as the step left it").toEqual(AS_RECORDED);
  }, 60_000);

  afterAll(async () => {
    await s.cleanup();
    dir.remove();
  });

  it("stead restore writes no setuid or setgid bit; --keep-special-bits keeps them", async () => {
    const to = join(dir.dir, "restored");
    const r = await cli(["restore", "sb", "--step", "make", "--to", to, "--store", s.location], dir.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(modesIn(to)).toEqual(STRIPPED);
    const kept = join(dir.dir, "kept");
    const k = await cli(["restore", "sb", "--step", "make", "--to", kept, "--keep-special-bits", "--store", s.location], dir.dir);
    expect(k.code, k.stderr).toBe(0);
    expect(modesIn(kept)).toEqual(AS_RECORDED);
  }, 60_000);

  it("the library's restore likewise, unless keepSpecialBits", async () => {
    const to = join(dir.dir, "lib");
    await s.stead.workspaces.restore("sb", { step: "make", to });
    expect(modesIn(to)).toEqual(STRIPPED);
    const kept = join(dir.dir, "lib-kept");
    await s.stead.workspaces.restore("sb", { step: "make", to: kept, keepSpecialBits: true });
    expect(modesIn(kept)).toEqual(AS_RECORDED);
  });

  it("a worker resuming the run on a machine without its files puts them back without the bits", async () => {
    rmSync(ws, { recursive: true, force: true });
    const w = s.stead.worker({ definitions: [special], ...FAST_WORKER });
    w.start();
    try {
      await s.stead.runs.approve("sb", "go");
      const run = await s.stead.runs.waitFor("sb", { timeoutMs: 20_000 });
      expect(run.status).toBe("completed");
      expect(run.output).toEqual({ setuid: "0755", setgid: "0755", shared: "0775" });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    expect(modesIn(ws)).toEqual(STRIPPED);
  }, 60_000);

  it("a worker given workspace.keepSpecialBits puts them back as recorded", async () => {
    const ws2 = join(dir.dir, "ws2");
    mkdirSync(ws2);
    const w = s.stead.worker({ definitions: [special], ...FAST_WORKER, workspace: { keepSpecialBits: true } });
    w.start();
    try {
      await s.stead.runs.start(special, ws2, { id: "sb2", workspace: ws2 });
      await s.stead.runs.waitFor("sb2", { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
      rmSync(ws2, { recursive: true, force: true });
      await s.stead.runs.approve("sb2", "go");
      const run = await s.stead.runs.waitFor("sb2", { timeoutMs: 20_000 });
      expect(run.output).toEqual({ setuid: "4755", setgid: "2755", shared: "2775" });
    } finally {
      await w.stop({ graceMs: 500 });
    }
  }, 60_000);

  it("the snapshot's tarball from the server carries no setuid or setgid bit", async () => {
    const token = (await s.stead.tokens.create({ name: "vera", role: "viewer" })).token;
    const server = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: 0 });
    try {
      const res = await fetch(`${server.url}/api/v1/runs/sb/snapshots/make/tarball`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const tar = gunzipSync(Buffer.from(await res.arrayBuffer()));
      const modes: Record<string, string> = {};
      for (let at = 0; at + 512 <= tar.length; ) {
        const name = tar.toString("utf8", at, at + 100).replace(/\0.*$/s, "").replace(/\/$/, "");
        if (name === "") break;
        modes[name] = tar.toString("ascii", at + 100, at + 107).slice(-4);
        const size = parseInt(tar.toString("ascii", at + 124, at + 135), 8) || 0;
        at += 512 + Math.ceil(size / 512) * 512;
      }
      expect(Object.fromEntries(Object.keys(STRIPPED).map((n) => [n, modes[n]]))).toEqual(STRIPPED);
    } finally {
      await server.close(1_000);
    }
  });
});
