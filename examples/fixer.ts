/**
 * fixer: an agent that fixes a failing test in a small workspace, with real tools (list, read,
 * run the tests, write a file, open a "pull request" that needs a person's approval).
 *
 *   npx stead run examples/fixer.ts --input '"the date parser test fails"'
 *
 * Model: with OPENAI_API_KEY set it talks to an OpenAI-compatible provider through the AI SDK
 * (OPENAI_BASE_URL, default https://api.openai.com/v1; FIXER_MODEL, default gpt-4o-mini). Without
 * a key it uses a scripted model that plays a careful engineer, offline and deterministic.
 *
 * The workspace is the run's (`stead run examples/fixer.ts --workspace <dir>`: snapshotted after
 * every tool call and restored when the run resumes), else FIXER_WORKSPACE (default
 * .stead/fixer-workspace). `init` seeds it with a buggy date parser and its test when it is empty.
 * FIXER_SLOW_MS slows `writeFile` down so a demo can kill the worker in the middle of that call.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { agent, modelTurns, scriptedModel, tool, toolResults } from "stead";
import { z } from "zod";

const fallbackWorkspace = resolve(process.env.FIXER_WORKSPACE ?? ".stead/fixer-workspace");
const rootOf = (ctx: { workspace: string | null }): string => ctx.workspace ?? fallbackWorkspace;
const slowMs = Number(process.env.FIXER_SLOW_MS ?? 0);

const BUGGY_DATE = `// Parses "YYYY-MM-DD" into a UTC Date.
export function parseDate(text) {
  const [year, month, day] = text.split("-").map(Number);
  return new Date(Date.UTC(year, month, day));
}
`;

const DATE_TEST = `import assert from "node:assert/strict";
import { parseDate } from "../src/date.js";

assert.equal(parseDate("2024-03-05").toISOString(), "2024-03-05T00:00:00.000Z");
assert.equal(parseDate("1999-12-31").toISOString(), "1999-12-31T00:00:00.000Z");
console.log("date parser: 2 tests passed");
`;

async function seed(workspace: string): Promise<void> {
  if (existsSync(join(workspace, "src", "date.js"))) return;
  await mkdir(join(workspace, "src"), { recursive: true });
  await mkdir(join(workspace, "test"), { recursive: true });
  await writeFile(join(workspace, "package.json"), JSON.stringify({ name: "fixer-workspace", type: "module" }, null, 2) + "\n");
  await writeFile(join(workspace, "src", "date.js"), BUGGY_DATE);
  await writeFile(join(workspace, "test", "date.test.js"), DATE_TEST);
}

/** A path inside the workspace; anything escaping it is refused (the model sees the error). */
function inside(workspace: string, path: string): string {
  const full = resolve(workspace, path);
  if (full !== workspace && !full.startsWith(workspace + sep)) throw new Error(`${path} is outside the workspace`);
  return full;
}

async function listFiles(workspace: string, dir = workspace): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const full = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFiles(workspace, full)));
    else out.push(relative(workspace, full));
  }
  return out.sort();
}

function runTests(workspace: string): Promise<{ passed: boolean; output: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ["test/date.test.js"], { cwd: workspace, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ passed: !error, output: (stdout + stderr).split("\n").slice(0, 12).join("\n").trim() });
    });
  });
}

const prSchema = z.object({ title: z.string().min(5), body: z.string() });

/** Plays a careful engineer from the transcript alone (no counters), so a resumed run gets the same answers. */
const offline = scriptedModel({
  modelId: "fixer-script",
  chunkDelayMs: 30,
  respond(prompt) {
    const results = toolResults(prompt);
    const text = (name: string) => {
      const r = [...results].reverse().find((x) => x.toolName === name);
      if (!r) return "";
      return r.output.type === "text" || r.output.type === "error-text" ? r.output.value : JSON.stringify(r.output.type === "json" ? r.output.value : r.output);
    };
    switch (modelTurns(prompt)) {
      case 0:
        return { text: "Let me look at the workspace.", toolCalls: [{ name: "listFiles", input: {} }] };
      case 1:
        return { text: "Reading the parser and its test.", toolCalls: [{ name: "readFile", input: { path: "src/date.js" } }, { name: "readFile", input: { path: "test/date.test.js" } }] };
      case 2:
        return { text: "Running the tests to see the failure.", toolCalls: [{ name: "runTests", input: {} }] };
      case 3: {
        const source = results.find((r) => r.toolName === "readFile")?.output;
        const code = source?.type === "text" ? source.value : "";
        return {
          text: "Date.UTC takes a 0-based month; the parser passes the 1-based month through. Fixing it.",
          toolCalls: [{ name: "writeFile", input: { path: "src/date.js", text: code.replace("Date.UTC(year, month, day)", "Date.UTC(year, month - 1, day)") } }],
        };
      }
      case 4:
        return { text: "Running the tests again.", toolCalls: [{ name: "runTests", input: {} }] };
      case 5:
        return {
          text: "The tests pass. Opening a pull request.",
          toolCalls: [{ name: "openPullRequest", input: { title: "Fix off-by-one month in parseDate", body: "Date.UTC takes a 0-based month.\n\n" + text("runTests") } }],
        };
      default: {
        const pr = text("openPullRequest");
        return { text: pr.startsWith("denied") ? `The fix is in src/date.js, but the pull request was not opened (${pr}).` : `Fixed: parseDate passed a 1-based month to Date.UTC. ${pr}` };
      }
    }
  },
});

const apiKey = process.env.OPENAI_API_KEY;
const model = apiKey
  ? createOpenAICompatible({ name: "openai", baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1", apiKey, includeUsage: true }).chatModel(process.env.FIXER_MODEL ?? "gpt-4o-mini")
  : offline;

export const fixer = agent("fixer", {
  model,
  instructions:
    "You fix failing tests in the workspace. Look at the files, run the tests, make the smallest correct change, " +
    "run the tests again, and open a pull request when they pass. Answer with one short paragraph.",
  maxTurns: 20,
  init: async (ctx) => {
    await seed(rootOf(ctx));
    if (ctx.recovery.kind === "resumed") console.log(`fixer: resumed (${ctx.recovery.reason === "crash" ? "its previous process died" : "after a wait, a hold or a hand-off"}); workspace ${rootOf(ctx)}`);
  },
  tools: {
    listFiles: tool({ description: "List the workspace's files.", input: z.object({}), idempotent: true, run: (_input, ctx) => listFiles(rootOf(ctx)) }),
    readFile: tool({
      description: "Read a file of the workspace.",
      input: z.object({ path: z.string() }),
      idempotent: true,
      run: ({ path }, ctx) => readFile(inside(rootOf(ctx), path), "utf8"),
    }),
    runTests: tool({ description: "Run the workspace's tests.", input: z.object({}), idempotent: true, run: (_input, ctx) => runTests(rootOf(ctx)) }),
    writeFile: tool({
      description: "Replace a file's whole content.",
      input: z.object({ path: z.string(), text: z.string() }),
      run: async ({ path, text }, ctx) => {
        const full = inside(rootOf(ctx), path);
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, text);
        if (slowMs > 0) await sleep(slowMs);
        return `wrote ${Buffer.byteLength(text)} bytes to ${path}`;
      },
    }),
    openPullRequest: tool({
      description: "Open a pull request with the change (a person approves it first).",
      input: prSchema,
      needsApproval: true,
      // A PR file names the idempotency key it was opened under: if it is there, the call happened.
      reconcile: (_call, ctx) => {
        const file = join(rootOf(ctx), ".pull-requests", `${encodeURIComponent(ctx.idempotencyKey)}.md`);
        return existsSync(file) ? { status: "done", result: `pull request opened: ${relative(rootOf(ctx), file)}` } : { status: "not-done" };
      },
      run: async ({ title, body }, ctx) => {
        const workspace = rootOf(ctx);
        const dir = join(workspace, ".pull-requests");
        await mkdir(dir, { recursive: true });
        const file = join(dir, `${encodeURIComponent(ctx.idempotencyKey)}.md`);
        await writeFile(file, `# ${title}\n\n${body}\n`);
        return `pull request opened: ${relative(workspace, file)}`;
      },
    }),
  },
});
