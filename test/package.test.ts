/**
 * The packed package as a user installs it: `npm pack`, installed offline into a fresh `npm init -y`
 * project (CommonJS: no "type" field) that has an ESM sub-folder of its own. In both folders the
 * README's workflow is started with the project's own `stead`, SIGKILLed mid-run and finished by
 * `stead worker`; an offline agent is cut off the same way and finished; `require("stead")`,
 * `import("stead")` and the CLI's engine share one SteadError class; `stead/conformance` loads under
 * both without a test runner; the types resolve under both conditions. The client package
 * (packages/client, `@stead/client`) is packed and installed alone into a project of its own: one
 * package, nothing native, the same behaviour under both formats.
 * Node runs with require(esm) switched off where it has the switch, so nothing relies on it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines, readText, requireBuild, ROOT, tempDir, until } from "./cli-helpers.js";

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Whether this Node can load ES modules with require(); where it can, the children run with that switched off. */
const REQUIRE_ESM_SWITCH = process.allowedNodeEnvironmentFlags.has("--no-experimental-require-module");

/** No inherited STEAD_* (store, crash points), npm_* (the outer `npm test`'s config) or NODE_OPTIONS. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("STEAD_") && !k.toLowerCase().startsWith("npm_") && k !== "NODE_OPTIONS") out[k] = v;
  }
  out.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
  if (REQUIRE_ESM_SWITCH) out.NODE_OPTIONS = "--no-experimental-require-module";
  return { ...out, USER: "tester", ...extra };
}

function start(command: string, args: readonly string[], cwd: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}) {
  const child = spawn(command, args, { cwd, env: env(options.env), stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const guard = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
  const done = new Promise<Result>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      children.delete(child);
      resolveDone({ code, signal, stdout: out, stderr: err });
    });
  });
  return { child, stdout: () => out, done };
}

function run(command: string, args: readonly string[], cwd: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Result> {
  return start(command, args, cwd, options).done;
}

async function ok(command: string, args: readonly string[], cwd: string, timeoutMs = 30_000): Promise<Result> {
  const r = await run(command, args, cwd, { timeoutMs });
  if (r.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.code ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

// The README's workflow, with steps that append to a side-effect log (fsynced, so a SIGKILL loses nothing).
const TRIAGE = `import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { workflow } from "stead";

function record(log: string, line: string): void {
  const fd = openSync(log, "a");
  try {
    writeSync(fd, line + "\\n");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export const triage = workflow("triage", async (ctx, input: { repo: string; log: string }) => {
  const files = await ctx.step("list-files", () => { record(input.log, "list-files"); return ["a.ts", "b.ts"]; });
  const report = await ctx.step("summarize", () => { record(input.log, "summarize"); return { title: files.length + " files" }; });
  await ctx.step("post-comment", { effect: true }, () => { record(input.log, "post-comment " + ctx.idempotencyKey); return "posted"; });
  const ok = await ctx.approval("ship-it", { summary: report.title });
  if (ok.approved) await ctx.step("ship", () => { record(input.log, "ship"); return true; });
  return report;
});
`;

// An offline agent: the scripted model asks for one tool call, then answers with its result.
const NOTER = `import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { agent, modelTurns, scriptedModel, tool, toolResults } from "stead";
import { z } from "zod";

export const noter = agent("noter", {
  model: scriptedModel({
    respond: (prompt) =>
      modelTurns(prompt) === 0
        ? { toolCalls: [{ name: "note", input: { text: "checked" } }] }
        : { text: "noted: " + JSON.stringify(toolResults(prompt).map((r) => r.output)) },
  }),
  tools: {
    note: tool({
      input: z.object({ text: z.string() }),
      run: ({ text }) => {
        const fd = openSync("agent.log", "a");
        try {
          writeSync(fd, "note " + text + "\\n");
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        return "ok " + text;
      },
    }),
  },
});
`;

// An error the CLI's engine throws into a definition is an instance of the class the definition imported.
const PROBE = `import { SteadError, workflow } from "stead";

export const probe = workflow("probe", async (ctx) => {
  await ctx.step("a", () => 1);
  try {
    await ctx.step("a", () => 2);
    return "no error";
  } catch (e) {
    return { instance: e instanceof SteadError, code: (e as SteadError).code };
  }
});
`;

// What each side of the package is: errors thrown through one are instances of the other's class.
const CHECK_BODY = `
function thrown(fn) {
  try { fn(); } catch (e) { return e; }
  return undefined;
}
const fromCjs = thrown(() => cjs.workflow("not a valid name!", () => 1));
const fromEsm = thrown(() => esm.workflow("not a valid name!", () => 1));
console.log(JSON.stringify({
  requireModule: process.features.require_module ?? null,
  sameClass: cjs.SteadError === esm.SteadError,
  cjsErrorIsEsmClass: fromCjs instanceof esm.SteadError,
  esmErrorIsCjsClass: fromEsm instanceof cjs.SteadError,
  codes: [fromCjs && fromCjs.code, fromEsm && fromEsm.code],
  missingInEsm: Object.keys(cjs).filter((k) => !(k in esm)),
  exported: Object.keys(cjs).length,
}));
`;
const CHECK_CJS = `const cjs = require("stead");
import("stead").then((esm) => {${CHECK_BODY}});
`;
const CHECK_ESM = `import { createRequire } from "node:module";
import * as esm from "stead";
import { SteadError as Named } from "stead";
const cjs = createRequire(import.meta.url)("stead");
if (Named !== esm.SteadError) throw new Error("named and namespace imports differ");
${CHECK_BODY}`;

// The conformance suite as a third store's project loads it: with stub test functions that only
// count what it registers (no test runner is installed in the project).
const CONFORMANCE_BODY = `
const counted = (mod) => {
  const seen = { cases: 0, skipped: 0, suites: 0, hooks: 0 };
  const it = Object.assign(() => void seen.cases++, { skip: () => void seen.skipped++ });
  const expect = Object.assign(() => ({}), { any: () => ({}) });
  mod.describeStoreConformance(
    { name: "stub", open: () => Promise.reject(new Error("not run")), dispose: () => Promise.resolve() },
    { describe: (_name, body) => { seen.suites++; body(); }, it, expect, beforeEach: () => void seen.hooks++, afterEach: () => void seen.hooks++ },
  );
  return seen;
};
console.log(JSON.stringify({
  same: cjs.describeStoreConformance === esm.describeStoreConformance,
  cjs: counted(cjs),
  esm: counted(esm),
  runners: ["vitest", "jest", "mocha"].filter((m) => { try { require.resolve(m); return true; } catch { return false; } }),
}));
`;
const CONFORMANCE_CJS = `const cjs = require("stead/conformance");
import("stead/conformance").then((esm) => {${CONFORMANCE_BODY}});
`;
const CONFORMANCE_ESM = `import { createRequire } from "node:module";
import * as esm from "stead/conformance";
const require = createRequire(import.meta.url);
const cjs = require("stead/conformance");
${CONFORMANCE_BODY}`;

// A client module as an app's front end loads it: nothing native (process.dlopen is watched before
// the import, and no module of Stead's runtime or better-sqlite3 is in the require cache after it),
// then one call of a real server whose URL is the first argument.
const WATCH_NATIVES = `const natives = [];
const dlopen = process.dlopen;
process.dlopen = function (module, file, ...rest) { natives.push(file); return dlopen.call(this, module, file, ...rest); };
`;
function clientScripts(mod: string): { cjs: string; esm: string } {
  const body = `
const stead = Object.keys(require.cache).filter((k) => /node_modules\\/(stead|@stead|better-sqlite3)\\//.test(k));
client.createClient({ url: process.argv[2] }).runs.list().then((listed) => {
  console.log(JSON.stringify({
    natives,
    loaded: stead.map((k) => k.slice(k.indexOf("node_modules/"))),
    same: client.SteadClientError === other.SteadClientError,
    runs: listed.runs.length,
    nextCursor: listed.nextCursor,
  }));
});
`;
  return {
    cjs: `${WATCH_NATIVES}const client = require("${mod}");
import("${mod}").then((other) => {${body}});
`,
    esm: `import { createRequire } from "node:module";
${WATCH_NATIVES}const require = createRequire(import.meta.url);
const client = await import("${mod}");
const { createClient } = client;
if (typeof createClient !== "function") throw new Error("no named createClient");
const other = require("${mod}");
${body}`,
  };
}

let dir = "";
let app = "";
const BIN = () => join(app, "node_modules", ".bin", "stead");

beforeAll(async () => {
  requireBuild();
  dir = tempDir("stead-pkg-");
  const packed = JSON.parse((await ok("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], ROOT)).stdout) as { filename: string }[];
  const tarball = join(dir, packed[0]!.filename);

  app = join(dir, "app");
  mkdirSync(app);
  await ok("npm", ["init", "-y"], app);
  const pkg = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as Record<string, unknown>;
  // npm 11 writes "type": "commonjs", older npm no "type": both CommonJS; the project takes the
  // older form, where CommonJS is only the default.
  expect(pkg.type ?? "commonjs").toBe("commonjs");
  delete pkg.type;
  const spec = `file:../${packed[0]!.filename}`;
  pkg.dependencies = { stead: spec };
  writeFileSync(join(app, "package.json"), JSON.stringify(pkg, null, 2) + "\n");

  // npm 11 resolves a lockfile-less install from full registry documents, which `npm ci` does not
  // cache: offline, the project gets a lockfile of the versions this repository's own lockfile
  // installs for Stead's dependencies, and `npm ci` installs exactly those from the cache.
  const repoLock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
  const repoPkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  const packages: Record<string, unknown> = {
    "": { name: pkg.name, version: pkg.version, license: pkg.license, dependencies: pkg.dependencies },
    "node_modules/stead": {
      version: repoPkg.version,
      resolved: spec,
      integrity: `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`,
      license: repoPkg.license,
      dependencies: repoPkg.dependencies,
      bin: repoPkg.bin,
      engines: repoPkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(repoLock.packages)) if (path !== "" && !entry.dev) packages[path] = entry;
  writeFileSync(join(app, "package-lock.json"), JSON.stringify({ name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages }, null, 2) + "\n");
  // Scripts off: better-sqlite3 would compile itself again (a minute); the repository's build is copied in.
  await ok("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], app, 60_000).catch((e: unknown) => {
    throw new Error(`${String(e)}\n(an ENOTCACHED error means npm's cache lacks a dependency: run \`npm ci\` in the repository first)`);
  });
  const addon = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
  mkdirSync(dirname(join(app, addon)), { recursive: true });
  copyFileSync(join(ROOT, addon), join(app, addon));

  const esm = join(app, "esm");
  mkdirSync(esm);
  writeFileSync(join(esm, "package.json"), JSON.stringify({ type: "module" }) + "\n");
  for (const folder of [app, esm]) {
    writeFileSync(join(folder, "triage.ts"), TRIAGE);
    writeFileSync(join(folder, "noter.ts"), NOTER);
    writeFileSync(join(folder, "probe.ts"), PROBE);
  }
  writeFileSync(join(app, "check.js"), CHECK_CJS);
  writeFileSync(join(esm, "check.js"), CHECK_ESM);
  writeFileSync(join(app, "conformance.js"), CONFORMANCE_CJS);
  writeFileSync(join(esm, "conformance.js"), CONFORMANCE_ESM);
  writeFileSync(join(app, "client.js"), clientScripts("stead/client").cjs);
  writeFileSync(join(esm, "client.js"), clientScripts("stead/client").esm);
}, 90_000);

afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the packed package in a fresh npm project", () => {
  it("installs with no install-time script of Stead's", () => {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules", "stead", "package.json"), "utf8")) as { scripts?: Record<string, string> };
    // The scripts npm runs when it installs a package (prepare too, for a tarball, folder or git source).
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(existsSync(join(app, "node_modules", "stead", "binding.gyp"))).toBe(false);
    expect(existsSync(join(app, "node_modules", "stead", "dist", "index.js"))).toBe(true);
  });

  describe.each([
    ["the CommonJS project", "."],
    ["its ESM sub-folder", "esm"],
  ])("in %s", (_name, sub) => {
    const folder = () => join(app, sub);

    it("require(\"stead\"), import(\"stead\") and the CLI's engine share one SteadError class", async () => {
      const r = await run(process.execPath, ["check.js"], folder());
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const seen = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(seen).toMatchObject({ sameClass: true, cjsErrorIsEsmClass: true, esmErrorIsCjsClass: true, codes: ["STEAD_INVALID_DEFINITION", "STEAD_INVALID_DEFINITION"], missingInEsm: [] });
      expect(seen.exported).toBeGreaterThan(20);
      if (REQUIRE_ESM_SWITCH) expect(seen.requireModule).toBe(false);

      const probe = await run(BIN(), ["run", "./probe.ts", "--store", join(folder(), "probe.db")], folder());
      expect(probe.code).toBe(0);
      expect(lines(probe.stdout).at(-1)).toBe(JSON.stringify({ instance: true, code: "STEAD_DUPLICATE_STEP_ID" }));
    });

    it("stead/conformance loads under require and import as one module, and registers its cases through the test functions it is given", async () => {
      const r = await run(process.execPath, ["conformance.js"], folder());
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      type Seen = { cases: number; skipped: number; suites: number; hooks: number };
      const seen = JSON.parse(r.stdout) as { same: boolean; cjs: Seen; esm: Seen; runners: string[] };
      expect(seen.same).toBe(true);
      expect(seen.runners).toEqual([]);
      expect(seen.esm).toEqual(seen.cjs);
      // One describe per concern inside the store's own.
      expect(seen.cjs.suites).toBeGreaterThan(10);
      expect(seen.cjs.cases + seen.cjs.skipped).toBeGreaterThan(60);
      expect(seen.cjs.hooks).toBeGreaterThanOrEqual(2);
    });

    it("stead/client loads under require and import as one module with no native module, and lists a real server's runs", async () => {
      const server = start(BIN(), ["serve", "--listen", "127.0.0.1:0", "--store", join(folder(), "client.db")], folder(), { timeoutMs: 60_000 });
      try {
        const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
        const r = await run(process.execPath, ["client.js", url], folder());
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        const seen = JSON.parse(r.stdout) as { natives: string[]; loaded: string[]; same: boolean; runs: number; nextCursor: string | null };
        expect(seen.natives).toEqual([]);
        expect(seen.loaded.length).toBeGreaterThan(0);
        expect(seen.loaded.filter((k) => !k.startsWith("node_modules/stead/dist/client/"))).toEqual([]);
        expect(seen.same).toBe(true);
        expect({ runs: seen.runs, nextCursor: seen.nextCursor }).toEqual({ runs: 0, nextCursor: null });
        // The installed package serves the console it ships: its page, and the script that page names.
        const page = await fetch(`${url}/runs`);
        expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
        const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
        expect(script).toBeDefined();
        const js = await fetch(`${url}${script ?? ""}`);
        expect([js.status, js.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
        expect((await js.text()).length).toBeGreaterThan(10_000);
      } finally {
        server.child.kill("SIGTERM");
        await server.done;
      }
    });

    it("the README's workflow and an agent, SIGKILLed mid-run, are finished by `stead worker` without repeating a completed step", async () => {
      const cwd = folder();
      const log = join(cwd, "effects.log");
      const agentLog = join(cwd, "agent.log");
      const triage = await run(BIN(), ["run", "./triage.ts", "--id", "triage-1", "--input", JSON.stringify({ repo: ".", log })], cwd, {
        env: { STEAD_CRASH_AT: "after-commit:summarize" },
      });
      expect(triage.stderr).not.toMatch(/cannot load|exports/);
      expect(triage.signal).toBe("SIGKILL");
      expect(lines(readText(log))).toEqual(["list-files", "summarize"]);

      const noter = await run(BIN(), ["run", "./noter.ts", "--id", "noter-1", "--input", JSON.stringify("take a note")], cwd, {
        env: { STEAD_CRASH_AT: "after-commit:tool:call_0_0" },
      });
      expect(noter.signal).toBe("SIGKILL");
      expect(lines(readText(agentLog))).toEqual(["note checked"]);

      const db = join(cwd, ".stead", "stead.db");
      const statusOf = (id: string) => {
        const conn = new Database(db, { readonly: true, fileMustExist: true });
        try {
          return conn.prepare("SELECT status, output, module FROM runs WHERE id = ?").get(id) as { status: string; output: string | null; module: string | null } | undefined;
        } finally {
          conn.close();
        }
      };
      expect(statusOf("triage-1")?.status).toBe("running");
      expect(statusOf("noter-1")?.status).toBe("running");
      // The definition's module, told from the stack under either format: what its fingerprint hashes.
      expect(statusOf("triage-1")?.module).toBe(join(cwd, "triage.ts"));

      const worker = start(BIN(), ["worker", "./triage.ts", "./noter.ts", "--poll", "50"], cwd, { timeoutMs: 40_000 });
      await until("triage-1 to park at its approval and noter-1 to complete", () =>
        statusOf("triage-1")?.status === "waiting" && statusOf("noter-1")?.status === "completed" ? true : undefined,
      );
      const approved = await run(BIN(), ["approve", "triage-1", "ship-it"], cwd);
      expect(approved.code).toBe(0);
      await until("triage-1 to complete", () => (statusOf("triage-1")?.status === "completed" ? true : undefined));
      worker.child.kill("SIGTERM");
      const stopped = await worker.done;
      expect(stopped.code).toBe(0);

      // Each step's effect exactly once: nothing committed before the kill ran again.
      expect(lines(readText(log))).toEqual(["list-files", "summarize", "post-comment triage-1:post-comment", "ship"]);
      expect(lines(readText(agentLog))).toEqual(["note checked"]);
      expect(JSON.parse(statusOf("triage-1")?.output ?? "null")).toEqual({ title: "2 files" });
      // The agent's final text is stored once: the run's row lists it as held by its last model step's row.
      const conn = new Database(db, { readonly: true, fileMustExist: true });
      const row = conn.prepare("SELECT output, output_refs FROM runs WHERE id = 'noter-1'").get() as { output: string; output_refs: string };
      expect(JSON.parse(row.output)).toMatchObject({ text: null });
      const ref = (JSON.parse(row.output_refs) as { field: string; step: string; path: (string | number)[] }[]).find((r) => r.field === "text");
      const stepOutput = (conn.prepare("SELECT output FROM steps WHERE run_id = 'noter-1' AND step_id = ?").get(ref?.step ?? "") as { output: string } | undefined)?.output;
      conn.close();
      let text: unknown = JSON.parse(stepOutput ?? "null");
      for (const k of ref?.path ?? []) text = (text as Record<string | number, unknown> | null)?.[k];
      expect(text).toContain("ok checked");
    });
  });

  it("type-checks against the package's types as CommonJS and as ESM", async () => {
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true, typeRoots: [join(ROOT, "node_modules", "@types")], types: ["node"] },
        files: ["triage.ts", "noter.ts", "esm/triage.ts", "esm/noter.ts", "types-cjs.ts", "esm/types-esm.ts"],
      }),
    );
    // Each file's format decides the condition it resolves "stead" with ("require" here, "import" in esm/).
    // The last line: a decision's tool fields, declared by the agent layer into the engine's Decision, reach a user under both.
    const probe =
      `import { SteadError, workflow, type Stead, type Store } from "stead";\nimport { describeStoreConformance, type StoreFactory } from "stead/conformance";\n` +
      `const e: SteadError = new SteadError("STEAD_BAD_OPTION", "x", { fix: "y" });\nexport const d = workflow("t", () => e.code);\n` +
      `export const f: StoreFactory = { name: "mine", open: (): Promise<Store> => Promise.reject(e), dispose: () => Promise.resolve() };\nexport const run: typeof describeStoreConformance = describeStoreConformance;\n` +
      `export const decide = (s: Stead) => s.runs.approve("r", "approve:c1", { input: { a: 1 }, scope: "run" });\n` +
      `import { createClient, SteadClientError, type StreamedEvent } from "stead/client";\nexport const listed: Promise<string | null> = createClient({ url: "http://127.0.0.1:1" }).runs.list().then((l) => l.nextCursor);\n` +
      `export const code = (e: unknown): string | undefined => (e instanceof SteadClientError ? e.code : undefined);\nexport const pos = (e: StreamedEvent): string => e.position;\n`;
    writeFileSync(join(app, "types-cjs.ts"), probe);
    writeFileSync(join(app, "esm", "types-esm.ts"), probe);
    const r = await run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--traceResolution"], app, { timeoutMs: 40_000 });
    expect(r.stdout.split("\n").filter((l) => /error TS/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    const resolved = (from: string) => new RegExp(`======== Module name 'stead' was successfully resolved to '([^']+)'`).exec(r.stdout.slice(r.stdout.indexOf(`Resolving module 'stead' from '${join(app, from)}'`)))?.[1];
    expect(resolved("types-cjs.ts")).toBe(join(app, "node_modules", "stead", "dist", "index.d.ts"));
    expect(resolved("esm/types-esm.ts")).toBe(join(app, "node_modules", "stead", "dist", "index.d.mts"));
    const resolvedConformance = (from: string) =>
      new RegExp(`======== Module name 'stead/conformance' was successfully resolved to '([^']+)'`).exec(r.stdout.slice(r.stdout.indexOf(`Resolving module 'stead/conformance' from '${join(app, from)}'`)))?.[1];
    expect(resolvedConformance("types-cjs.ts")).toBe(join(app, "node_modules", "stead", "dist", "conformance.d.ts"));
    expect(resolvedConformance("esm/types-esm.ts")).toBe(join(app, "node_modules", "stead", "dist", "conformance.d.mts"));
    const resolvedClient = (from: string) =>
      new RegExp(`======== Module name 'stead/client' was successfully resolved to '([^']+)'`).exec(r.stdout.slice(r.stdout.indexOf(`Resolving module 'stead/client' from '${join(app, from)}'`)))?.[1];
    expect(resolvedClient("types-cjs.ts")).toBe(join(app, "node_modules", "stead", "dist", "client", "index.d.ts"));
    expect(resolvedClient("esm/types-esm.ts")).toBe(join(app, "node_modules", "stead", "dist", "client.d.mts"));
  });
});

// The client published alone (packages/client): an app that only talks to a server installs it
// and nothing else.
describe("the @stead/client package in a fresh npm project of its own", () => {
  let clientApp = "";
  let files: string[] = [];

  beforeAll(async () => {
    const packed = JSON.parse((await ok("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], join(ROOT, "packages", "client"))).stdout) as {
      filename: string;
      files: { path: string }[];
    }[];
    files = packed[0]!.files.map((f) => f.path);
    clientApp = join(dir, "client-app");
    mkdirSync(join(clientApp, "esm"), { recursive: true });
    await ok("npm", ["init", "-y"], clientApp);
    const pkg = JSON.parse(readFileSync(join(clientApp, "package.json"), "utf8")) as Record<string, unknown>;
    delete pkg.type;
    writeFileSync(join(clientApp, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
    await ok("npm", ["install", "--offline", "--no-audit", "--no-fund", `../${packed[0]!.filename}`], clientApp, 60_000);
    writeFileSync(join(clientApp, "esm", "package.json"), JSON.stringify({ type: "module" }) + "\n");
    writeFileSync(join(clientApp, "client.js"), clientScripts("@stead/client").cjs);
    writeFileSync(join(clientApp, "esm", "client.js"), clientScripts("@stead/client").esm);
  }, 90_000);

  it("installs one package with no dependencies, no install-time script and only its built client, at the root package's version", () => {
    expect(readdirSync(join(clientApp, "node_modules")).filter((n) => !n.startsWith("."))).toEqual(["@stead"]);
    expect(readdirSync(join(clientApp, "node_modules", "@stead"))).toEqual(["client"]);
    const manifest = JSON.parse(readFileSync(join(clientApp, "node_modules", "@stead", "client", "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) expect((manifest.scripts as Record<string, string> | undefined)?.[script], script).toBeUndefined();
    expect(files.filter((f) => f !== "package.json" && f !== "README.md" && !/^dist\/client(\/[a-z-]+\.(js|d\.ts)|\.mjs|\.d\.mts)$/.test(f))).toEqual([]);
    expect(files).toContain("dist/client/index.js");
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; license: string; engines: unknown };
    expect({ version: manifest.version, license: manifest.license, engines: manifest.engines }).toEqual({ version: root.version, license: root.license, engines: root.engines });
  });

  it.each([
    ["the CommonJS project", "."],
    ["its ESM sub-folder", "esm"],
  ])("in %s, loads under require and import as one module with nothing native, and lists a real server's runs", async (_name, sub) => {
    const store = join(dir, `client-package-${sub === "." ? "cjs" : "esm"}.db`);
    const server = start(BIN(), ["serve", "--listen", "127.0.0.1:0", "--store", store], app, { timeoutMs: 60_000 });
    try {
      const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
      const r = await run(process.execPath, ["client.js", url], join(clientApp, sub));
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const seen = JSON.parse(r.stdout) as { natives: string[]; loaded: string[]; same: boolean; runs: number; nextCursor: string | null };
      expect(seen.natives).toEqual([]);
      expect(seen.loaded.length).toBeGreaterThan(0);
      expect(seen.loaded.filter((k) => !k.startsWith("node_modules/@stead/client/dist/client/"))).toEqual([]);
      expect(seen.same).toBe(true);
      expect({ runs: seen.runs, nextCursor: seen.nextCursor }).toEqual({ runs: 0, nextCursor: null });
    } finally {
      server.child.kill("SIGTERM");
      await server.done;
    }
  });

  it("type-checks against its types as CommonJS and as ESM", async () => {
    const probe =
      `import { createClient, SteadClientError, type StreamedEvent } from "@stead/client";\n` +
      `export const listed: Promise<string | null> = createClient({ url: "http://127.0.0.1:1" }).runs.list().then((l) => l.nextCursor);\n` +
      `export const code = (e: unknown): string | undefined => (e instanceof SteadClientError ? e.code : undefined);\nexport const pos = (e: StreamedEvent): string => e.position;\n`;
    writeFileSync(join(clientApp, "types-cjs.ts"), probe);
    writeFileSync(join(clientApp, "esm", "types-esm.ts"), probe);
    writeFileSync(
      join(clientApp, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: false, lib: ["es2022", "dom"], types: [] },
        files: ["types-cjs.ts", "esm/types-esm.ts"],
      }),
    );
    const r = await run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--traceResolution"], clientApp, { timeoutMs: 40_000 });
    expect(r.stdout.split("\n").filter((l) => /error TS/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    const resolved = (from: string) =>
      new RegExp(`======== Module name '@stead/client' was successfully resolved to '([^']+)'`).exec(r.stdout.slice(r.stdout.indexOf(`Resolving module '@stead/client' from '${join(clientApp, from)}'`)))?.[1];
    expect(resolved("types-cjs.ts")).toBe(join(clientApp, "node_modules", "@stead", "client", "dist", "client", "index.d.ts"));
    expect(resolved("esm/types-esm.ts")).toBe(join(clientApp, "node_modules", "@stead", "client", "dist", "client.d.mts"));
  });
});
