/**
 * What loading the package costs a worker at start-up (issue 14's W3): the package's entry, as
 * an application requires it from dist/, must not load the code of what a plain worker never
 * does at start (dumps, backups, workspaces, the agent loop, Postgres's DDL, the AI SDK's
 * provider package); each is loaded on first use. Nor must the CLI, which `stead worker` starts
 * through. Checked in a fresh node process, from the modules it has loaded.
 *
 * Needs a fresh dist/ (`npm test` builds first; alone, run `npm run build`).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));

/** The files (relative to dist/, or a package's path under node_modules/) a fresh process has loaded after `script`. */
function loadedAfter(script: string): string[] {
  if (!existsSync(`${DIST}index.js`)) throw new Error("dist/ is missing: run `npm run build` before these tests (`npm test` does)");
  const out = execFileSync(
    process.execPath,
    ["-e", `${script}; process.stdout.write(JSON.stringify(Object.keys(require.cache)))`],
    { cwd: DIST, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } },
  );
  return (JSON.parse(out) as string[]).map((f) => (f.includes("/node_modules/") ? `node_modules/${f.split("/node_modules/").pop() ?? f}` : f.slice(DIST.length)));
}

const LAZY = [/^store\/transfer\/(index|export|import|verify|digest)\.js$/, /^stead\/backup\.js$/, /^workspace\/(index|capture|scan|tree|gc|restore|resume)\.js$/, /^node_modules\/ignore\//, /^node_modules\/@ai-sdk\/provider\//, /^agent\/(run|loop|history|model-step|model-stream|provider-errors)\.js$/, /^store\/postgres\/(migrations|mutation-function)\.js$/];
/** The CLI also loads these only in the command that needs them (a restore, an import, `stead mcp`). */
const LAZY_IN_CLI = [...LAZY, /^server\/mcp\//, /^stead\/transfer\.js$/];

describe("start-up", () => {
  it("requiring the package loads none of the code a worker only needs on first use", () => {
    const loaded = loadedAfter(`require(${JSON.stringify(`${DIST}index.js`)})`);
    expect(loaded).toContain("worker/worker.js");
    expect(loaded.filter((f) => LAZY.some((p) => p.test(f)))).toEqual([]);
  });

  it("loading the CLI loads none of it either, nor what only one command needs", () => {
    const loaded = loadedAfter(`require(${JSON.stringify(`${DIST}cli/main.js`)})`);
    expect(loaded).toContain("cli/commands/run.js");
    expect(loaded.filter((f) => LAZY_IN_CLI.some((p) => p.test(f)))).toEqual([]);
  });

  // Workspaces and dumps are loaded by import() on first use: their own tests run through that path.
  it("the provider package is loaded at the first model failure classified, and classifies it", () => {
    const loaded = loadedAfter(
      `const s = require(${JSON.stringify(`${DIST}index.js`)});
       const { classifyProviderError } = require(${JSON.stringify(`${DIST}agent/provider-errors.js`)});
       const { APICallError } = require("@ai-sdk/provider");
       const e = new APICallError({ message: "x", url: "http://127.0.0.1/", requestBodyValues: {}, statusCode: 503, isRetryable: true });
       if (classifyProviderError(e, Date.now()).kind !== "transient") throw new Error("a 503 was not classified transient");
       void s`,
    );
    expect(loaded).toContain("node_modules/@ai-sdk/provider/dist/index.js");
  });
});
