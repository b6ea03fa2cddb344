// `npm run demo`: two stories through the real `stead` CLI on a fresh SQLite store.
// 1. The index-report workflow: a run is killed with SIGKILL in the middle, a worker picks it up at
//    its last completed step, it parks for an approval, a person approves through the HTTP API
//    (`stead serve`, an operator token, the same POST twice), it sleeps, publishes.
// 2. The fixer agent (scripted model, offline) works in a workspace directory: killed with SIGKILL
//    in the middle of a tool call that is not safe to repeat; on resume its workspace is put back
//    as it was after the last completed step and the run is held; a person chooses retry, then
//    approves the agent's pull request with edited arguments; the workspace's tests pass.
// Exits 0 when every part of both stories happened; otherwise non-zero, naming the part that did not.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "bin", "stead.js");
const workflowFile = "examples/index-report.ts";
const agentFile = "examples/fixer.ts";
const WAIT_MS = 60_000;

const tmp = mkdtempSync(join(tmpdir(), "stead-demo-"));
const store = join(tmp, ".stead", "stead.db");
const out = join(tmp, "out");
const workspace = join(tmp, "workspace");
/** The fixer's environment: a slow writeFile so the demo can kill it mid-call, and the offline model. */
const agentEnv = { FIXER_SLOW_MS: "3000", OPENAI_API_KEY: "" };
/** @type {Set<import("node:child_process").ChildProcess>} */
const background = new Set();

const bold = (/** @type {string} */ s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (/** @type {string} */ s) => console.log(`\n${bold(`# ${s}`)}`);
const indent = (/** @type {string} */ text, prefix = "  ") =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => `${prefix}${l}`)
    .join("\n");

class DemoFailure extends Error {}

/**
 * Polls `probe` until it is true (a missing file counts as false).
 * @param {() => boolean} probe
 * @param {string} what
 */
async function poll(probe, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      if (probe()) return;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new DemoFailure(`no sign after ${WAIT_MS / 1000}s that ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** @param {string} why @returns {never} */
function fail(why) {
  throw new DemoFailure(why);
}

/** The command as a reader would type it: the store path is abbreviated to $STORE. */
function shown(/** @type {string[]} */ args) {
  return ["stead", ...args]
    .map((a) => (a === store ? "$STORE" : /^[\w./:=@$-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

/**
 * Starts `stead <args>` and echoes its output as it arrives; `lines` collects it for waiting on.
 * @param {string[]} args
 * @param {string} prefix
 */
function start(args, prefix = "  ", env = {}) {
  console.log(`$ ${shown(args)}`);
  const child = spawn(process.execPath, [bin, ...args], { cwd: repo, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  background.add(child);
  /** @type {string[]} */
  const lines = [];
  /** @type {Set<() => void>} */
  const listeners = new Set();
  /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
  const exited = new Promise((done) =>
    child.on("exit", (code, signal) => {
      background.delete(child);
      done({ code, signal });
      for (const l of listeners) l();
    }),
  );
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream.on("data", (/** @type {Buffer} */ chunk) => {
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (line.trim() !== "") console.log(`${prefix}${line}`);
      }
      for (const l of listeners) l();
    });
  }
  /**
   * Resolves with the first output line matching `pattern`; rejects on a line matching `failure`.
   * @param {RegExp} pattern
   * @param {string} what
   * @param {RegExp} [failure]
   * @param {number} [since] look only at lines from this index on (default: all)
   * @returns {Promise<string>}
   */
  const waitFor = (pattern, what, failure, since = 0) =>
    new Promise((done, reject) => {
      const check = () => {
        const recent = lines.slice(since);
        const hit = recent.find((l) => pattern.test(l));
        const bad = failure && recent.find((l) => failure.test(l));
        if (hit !== undefined) {
          cleanup();
          done(hit);
        } else if (bad) {
          cleanup();
          reject(new DemoFailure(`expected that ${what}, but: ${bad.trim()}`));
        } else if (child.exitCode !== null || child.signalCode !== null) {
          cleanup();
          reject(new DemoFailure(`\`${shown(args)}\` exited (${child.exitCode ?? child.signalCode}) before ${what}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new DemoFailure(`no sign after ${WAIT_MS / 1000}s that ${what}`));
      }, WAIT_MS);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, lines, exited, waitFor };
}

/**
 * Runs `stead <args>` to the end, echoing its output, and checks its exit code.
 * @param {string[]} args
 * @param {number} expectCode
 * @returns {Promise<string>}
 */
async function stead(args, expectCode = 0, env = {}) {
  const p = start(args, "  ", env);
  const { code, signal } = await p.exited;
  if (code !== expectCode) fail(`\`${shown(args)}\` exited ${code ?? signal}, expected ${expectCode}`);
  return p.lines.join("\n");
}

/** A worker's line saying the run ended badly or stopped for a person. */
const ended = (/** @type {string} */ runId) => new RegExp(`${runId} (failed|held|aborted|cancelled)`);

/** @returns {Promise<{ seq: number, type: string, data: Record<string, unknown> }[]>} */
async function events(/** @type {string} */ runId) {
  const child = spawn(process.execPath, [bin, "logs", runId, "--json", "--store", store], { cwd: repo, stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  child.stdout.on("data", (/** @type {Buffer} */ d) => (text += d.toString()));
  /** @type {number | null} */
  const code = await new Promise((done) => child.on("exit", done));
  if (code !== 0) fail(`stead logs ${runId} --json exited ${String(code)}`);
  /** @type {unknown} */
  const parsed = JSON.parse(text);
  if (!Array.isArray(parsed)) fail(`stead logs ${runId} --json printed no JSON array`);
  /** @type {{ seq: number, type: string, data: Record<string, unknown> }[]} */
  const list = parsed;
  return list;
}

async function main() {
  if (!existsSync(join(repo, "dist", "cli", "main.js"))) fail("the CLI is not built: run `npm run build` (or `npm run demo`, which builds first)");

  console.log(bold("Stead demo: kill a run with SIGKILL, and it comes back at its last completed step."));
  console.log(`A fresh store for this demo:\n  export STORE=${store}`);
  await workflowStory();
  await agentStory();
  console.log(`\n${bold("The demo ran end to end.")} Store, report and workspace are in ${tmp} (removed now).`);
}

async function workflowStory() {
  console.log(`\n${bold("Part 1: a workflow.")}`);

  say("Start a run that indexes this repository's src/ (slowed down so we can kill it mid-run).");
  const input = JSON.stringify({ dir: "src", out, slowMs: 700 });
  const run = start(["run", workflowFile, "--input", input, "--store", store]);
  const started = await run.waitFor(/^run \S+ started/, "the run started");
  const runId = started.split(" ")[1] ?? fail(`cannot read a run id from "${started}"`);
  await run.waitFor(/step "count-1" completed/, 'step "count-1" completed');

  say(`Pull the plug: kill -9 ${run.child.pid} (the \`stead run\` process), in the middle of the run.`);
  run.child.kill("SIGKILL");
  const killed = await run.exited;
  if (killed.signal !== "SIGKILL") fail(`the run process ended with ${killed.code ?? killed.signal} before it could be killed`);
  const beforeKill = (await events(runId)).filter((e) => e.type === "step.completed").map((e) => String(e.data.step));
  console.log(`  (killed; the journal holds ${beforeKill.length} completed steps: ${beforeKill.join(", ")})`);

  say("The run is still in the store, owned by a process that no longer exists.");
  await stead(["ps", "--store", store]);
  await stead(["why", runId, "--store", store]);

  say("Start a worker. It sees the owner is gone, claims the run and resumes it at its last completed step.");
  const worker = start(["worker", workflowFile, "--store", store], "  [worker] ");
  await worker.waitFor(new RegExp(`${runId} waiting for publish`), "the run parked for the approval", ended(runId));

  say("The logs: the steps completed before the kill ran once; the worker went on from the next one.");
  await stead(["logs", runId, "--store", store]);
  const log = await events(runId);
  const claims = log.filter((e) => e.type === "run.claimed");
  const secondClaim = claims[1] ?? fail(`expected the worker to claim the run a second time; events: ${claims.length} claims`);
  for (const step of beforeKill) {
    const completions = log.filter((e) => e.type === "step.completed" && e.data.step === step);
    if (completions.length !== 1) fail(`step "${step}" completed ${completions.length} times; a completed step must never run again`);
  }
  const resumedAt = log.find((e) => e.seq > secondClaim.seq && e.type === "step.completed");
  if (!resumedAt || beforeKill.includes(String(resumedAt.data.step))) fail("the worker did not go on from the first step left to do");
  console.log(`  (checked: ${beforeKill.join(", ")} each completed exactly once; the worker's first step was "${String(resumedAt.data.step)}")`);

  say("It is parked for a person, with no process holding it. Why?");
  await stead(["why", runId, "--store", store]);
  const report = join(out, "index-report.md");
  if (!existsSync(report)) fail(`the report ${report} was not written`);
  console.log(`$ head -4 ${report}`);
  console.log(indent(readFileSync(report, "utf8").split("\n").slice(0, 4).join("\n")));

  await approveOverHttp(runId, "publish");
  say("The running worker resumes the run by itself: a 2 s durable sleep, then publish.");
  await worker.waitFor(new RegExp(`${runId} completed`), "the run completed after the approval", ended(runId));

  say("Done.");
  await stead(["status", runId, "--store", store]);
  const published = join(out, "published.md");
  if (!existsSync(published) || readFileSync(published, "utf8") !== readFileSync(report, "utf8")) fail(`${published} is missing or differs from the report`);
  console.log(`  (published: ${published})`);

  say(`Stop the worker gracefully: kill -TERM ${worker.child.pid}`);
  worker.child.kill("SIGTERM");
  const stopped = await worker.exited;
  if (stopped.code !== 0) fail(`the worker exited ${stopped.code ?? stopped.signal} on SIGTERM, expected 0`);
}

/**
 * Runs `stead <args>` to the end without echoing its output (it holds a secret), and returns it.
 * @param {string[]} args
 * @returns {Promise<string>}
 */
async function quietly(args) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repo, stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  child.stdout.on("data", (/** @type {Buffer} */ d) => (text += d.toString()));
  /** @type {number | null} */
  const code = await new Promise((done) => child.on("exit", done));
  if (code !== 0) fail(`\`${shown(args)}\` exited ${String(code)}`);
  return text;
}

/**
 * A person approves from elsewhere: through `stead serve`'s HTTP API with an operator's token.
 * The same request sent twice (a client's retry) is answered from the first and changes nothing.
 * @param {string} runId
 * @param {string} wait
 */
async function approveOverHttp(runId, wait) {
  say("Approve publishing from elsewhere: serve the store's HTTP API on loopback, and POST the approval with an operator's token.");
  const tokenArgs = ["tokens", "create", "--role", "operator", "--name", "demo-operator", "--json", "--store", store];
  console.log(`$ export TOKEN=$(${shown(tokenArgs)} | jq -r .token)   # printed once, stored hashed`);
  /** @type {unknown} */
  const created = JSON.parse(await quietly(tokenArgs));
  const token = created && typeof created === "object" && "token" in created && typeof created.token === "string" ? created.token : fail("stead tokens create --json printed no token");
  const server = start(["serve", "--listen", "127.0.0.1:0", "--store", store], "  [serve] ");
  const serving = await server.waitFor(/ on (https?:\/\/\S+)\/api\/v1/, "the server is listening");
  const base = / on (https?:\/\/\S+)\/api\/v1/.exec(serving)?.[1] ?? fail(`cannot read the server's address from "${serving}"`);
  const url = `${base}/api/v1/runs/${runId}/waits/${wait}/approve`;
  const body = JSON.stringify({ reason: "report checked" });
  const post = () => fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}`, "idempotency-key": `demo-${runId}-${wait}`, "content-type": "application/json" }, body });
  console.log(`$ curl -X POST ${url} -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: demo-${runId}-${wait}" -H "Content-Type: application/json" -d '${body}'`);
  const first = await post();
  const answer = await first.text();
  console.log(indent(`HTTP ${first.status}\n${answer}`));
  if (first.status !== 200) fail(`the approval over HTTP was answered ${first.status}: ${answer}`);
  say("The phone's connection dropped before it saw the answer, so it sends the same request again: the decision already made comes back (`already: true`); nothing is decided twice.");
  const again = await post();
  const replayed = again.headers.get("idempotent-replayed");
  console.log(indent(`HTTP ${again.status} (Idempotent-Replayed: ${replayed ?? "absent"})\n${await again.text()}`));
  if (again.status !== 200 || replayed !== "true") fail(`the retried approval was answered ${again.status}, Idempotent-Replayed ${String(replayed)}`);
  server.child.kill("SIGTERM");
  const stopped = await server.exited;
  if (stopped.code !== 0) fail(`stead serve exited ${stopped.code ?? stopped.signal} on SIGTERM, expected 0`);
  const decisions = (await events(runId)).filter((e) => e.type === "approval.approved" && e.data.wait === wait);
  if (decisions.length !== 1 || decisions[0]?.data.by !== "demo-operator") fail(`expected one decision on "${wait}" by demo-operator in the run's events, found ${JSON.stringify(decisions.map((e) => e.data))}`);
  console.log(`  (checked: the run's events hold one decision on "${wait}", by "demo-operator", the token's name)`);
}

async function agentStory() {
  console.log(`\n${bold("Part 2: an agent.")} examples/fixer.ts fixes a failing test with real tools; offline, a scripted model plays the engineer.`);
  console.log(`  export FIXER_SLOW_MS=3000   # writeFile lingers 3 s after writing, so we can kill it mid-call`);
  mkdirSync(workspace, { recursive: true });

  say("Start the agent in a workspace. Model and tool calls are journaled steps; its text streams as live events; the files are snapshotted after each tool call.");
  const run = start(["run", agentFile, "--input", JSON.stringify("the date parser test fails"), "--workspace", workspace, "--store", store], "  ", agentEnv);
  const started = await run.waitFor(/^run \S+ started/, "the agent run started");
  const runId = started.split(" ")[1] ?? fail(`cannot read a run id from "${started}"`);
  const intent = await run.waitFor(/step "tool:\S+" intent recorded/, "the agent called writeFile (its intent was recorded)");
  const toolStep = /step "(tool:[^"]+)"/.exec(intent)?.[1] ?? fail(`cannot read the tool step from "${intent}"`);

  await poll(() => readFileSync(join(workspace, "src", "date.js"), "utf8").includes("month - 1"), "writeFile wrote the fix");
  say(`Pull the plug in the middle of writeFile (the file is written, the call has not returned): kill -9 ${run.child.pid}.`);
  run.child.kill("SIGKILL");
  const killed = await run.exited;
  if (killed.signal !== "SIGKILL") fail(`the agent process ended with ${killed.code ?? killed.signal} before it could be killed`);
  const before = await events(runId);
  const modelsBefore = before.filter((e) => e.type === "step.completed" && String(e.data.step).startsWith("model-")).map((e) => String(e.data.step));

  say("A worker resumes the run. First its workspace is put back as it was after the last completed step (src/date.js changed after it). writeFile is not idempotent and has no reconcile, so it is not run again blindly: the run is held.");
  const worker = start(["worker", agentFile, "--store", store], "  [worker] ", agentEnv);
  await worker.waitFor(new RegExp(`${runId} held \\(ambiguous_effect\\)`), "the run was held ambiguous_effect", new RegExp(`${runId} (failed|completed|aborted)`));
  const restored = (await events(runId)).find((e) => e.type === "workspace.restored");
  if (!restored || !JSON.stringify(restored.data).includes("src/date.js")) fail(`expected a workspace.restored event listing src/date.js, got ${JSON.stringify(restored?.data ?? null)}`);
  console.log(`  (workspace.restored: ${JSON.stringify(restored.data)})`);
  await stead(["why", runId, "--store", store]);

  say("A person looks: the workspace is back at the last completed step (the old parser), so running writeFile again is right.");
  console.log(`$ cat ${join(workspace, "src", "date.js")}`);
  const current = readFileSync(join(workspace, "src", "date.js"), "utf8");
  console.log(indent(current));
  if (current.includes("month - 1")) fail("the workspace was not put back to the last completed step");
  const afterHold = worker.lines.length;
  await stead(["release", runId, "ambiguous_effect", "--choice", "retry", "--store", store]);

  say("The worker goes on from there: it runs the tests, then parks for approval of the pull request, costing no process.");
  const parked = await worker.waitFor(new RegExp(`${runId} waiting for approve:`), "the agent parked for the pull request's approval", new RegExp(`${runId} (failed|held|aborted)`), afterHold);
  const wait = /waiting for (approve:\S+)/.exec(parked)?.[1] ?? fail(`cannot read the approval name from "${parked}"`);
  await stead(["why", runId, "--store", store]);

  say("Approve it with an edited title (checked against the tool's input schema); the worker resumes the run by itself.");
  await stead(["approve", runId, wait, "--edit", JSON.stringify({ title: "Fix the month in parseDate", body: "Date.UTC takes a 0-based month." }), "--store", store]);
  await worker.waitFor(new RegExp(`${runId} completed`), "the agent run completed", new RegExp(`${runId} (failed|held|aborted)`), afterHold);
  await stead(["status", runId, "--store", store]);

  say("Checks: the workspace's tests pass, the pull request has the edited title, nothing ran twice.");
  const test = spawn(process.execPath, ["test/date.test.js"], { cwd: workspace, stdio: ["ignore", "pipe", "pipe"] });
  let testOut = "";
  test.stdout.on("data", (/** @type {Buffer} */ d) => (testOut += d.toString()));
  /** @type {number | null} */
  const testCode = await new Promise((done) => test.on("exit", (code) => done(code)));
  if (testCode !== 0) fail(`the workspace's tests still fail after the agent's fix (exit ${String(testCode)})`);
  console.log(`$ node test/date.test.js\n${indent(testOut)}`);
  const prDir = join(workspace, ".pull-requests");
  const pr = existsSync(prDir) ? readdirSync(prDir).map((f) => readFileSync(join(prDir, f), "utf8")) : [];
  if (pr.length !== 1 || !pr[0]?.startsWith("# Fix the month in parseDate")) fail(`expected one pull request with the edited title, found ${pr.length}`);
  const log = await events(runId);
  for (const step of new Set(log.filter((e) => e.type === "step.completed").map((e) => String(e.data.step)))) {
    const n = log.filter((e) => e.type === "step.completed" && e.data.step === step).length;
    if (n !== 1) fail(`step "${step}" completed ${n} times`);
  }
  const intents = log.filter((e) => e.type === "step.intent" && e.data.step === toolStep);
  if (intents.length !== 2 || intents[1]?.data.attempt !== 2) fail(`${toolStep} was dispatched ${intents.length} times; expected the killed attempt and one retry a person chose`);
  console.log(`  (checked: tests pass; one pull request, edited title; ${toolStep} ran again only as the attempt a person chose; the ${modelsBefore.length} model responses journaled before the kill were never requested again)`);
  await stead(["snapshots", runId, "--store", store]);

  worker.child.kill("SIGTERM");
  const stopped = await worker.exited;
  if (stopped.code !== 0) fail(`the agent worker exited ${stopped.code ?? stopped.signal} on SIGTERM, expected 0`);
}

main()
  .then(() => {
    rmSync(tmp, { recursive: true, force: true });
  })
  .catch((/** @type {unknown} */ e) => {
    for (const c of background) c.kill("SIGKILL");
    const message = e instanceof DemoFailure ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
    console.error(`\ndemo failed: ${message}\n(store and files kept for inspection in ${tmp})`);
    process.exitCode = 1;
  });
