import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { distUrl, stead as lib } from "./lib.js";

const NAME = "bench-w3-recovery";
/** Pinned so the run created here and the child processes' definition share a fingerprint. */
const VERSION = "bench-w3-1";
const CLI = resolve(import.meta.dirname, "../bin/stead.js");

const recoveryRun = lib.workflow(NAME, { version: VERSION }, () => {
  throw new Error("W3 runs are executed by the child worker processes, never in the bench process");
});

/**
 * The definition and the worker process under test, in plain JavaScript on the built library
 * (dist/), so the main figure is Stead's own recovery cost and not a TypeScript loader's.
 */
function writeScripts(dir: string): { worker: string; definition: string } {
  const definition = join(dir, "w3-definition.mjs");
  const worker = join(dir, "w3-worker.mjs");
  writeFileSync(
    definition,
    `import { workflow } from ${JSON.stringify(distUrl)};
const body = "lorem ipsum dolor sit amet ".repeat(40).slice(0, 1000);
export const run = workflow(${JSON.stringify(NAME)}, { version: ${JSON.stringify(VERSION)} }, async (ctx, input) => {
  for (let i = 1; i <= input.steps; i++) await ctx.step("s-" + i, () => ({ step: i, body }));
  return { steps: input.steps };
});
`,
  );
  writeFileSync(
    worker,
    `import { createStead } from ${JSON.stringify(distUrl)};
import { run } from "./w3-definition.mjs";
const stead = createStead({ store: process.argv[2] });
const worker = stead.worker({ definitions: [run], concurrency: 1 });
worker.on("outcome", (_id, o) => void stead.close().then(() => process.exit(o.kind === "completed" ? 0 : 3)));
worker.on("error", (e) => { console.error(e); process.exit(2); });
worker.start();
`,
  );
  return { worker, definition };
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function spawnChild(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<Exit>((done, fail) => {
    child.on("error", fail);
    child.on("exit", (code, signal) => done({ code, signal, stdout, stderr }));
  });
  return { child, exited };
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.STEAD_CRASH_AT;
  delete env.STEAD_CRASH_HIT;
  delete env.NODE_OPTIONS;
  return env;
}

/** Spawn to first output of a bare `node -e`: the floor any worker process start pays. */
export async function bareNodeStartMs(): Promise<number> {
  const spawnedAt = Date.now();
  const r = await spawnChild(["-e", "process.stdout.write(String(Date.now()))"], cleanEnv()).exited;
  const at = Number(r.stdout);
  if (r.code !== 0 || !Number.isFinite(at)) throw new Error(`bare node start failed: ${r.stderr}`);
  return at - spawnedAt;
}

/**
 * A run of `steps` steps is SIGKILLed right after step `killAfter`'s commit (a real crash point);
 * then a fresh worker process is spawned: a script on the library, or `stead worker` (the CLI,
 * which loads the definition through tsx). Returns the time from that spawn to the commit of the
 * next step, as recorded by its `step.completed` event (the same clock as the spawn time).
 */
export async function recoveryMs(dir: string, via: "library" | "cli", steps = 200, killAfter = 100): Promise<number> {
  const store = join(dir, "stead.db");
  const scripts = writeScripts(dir);
  const stead = lib.createStead({ store });
  const next = `s-${killAfter + 1}`;
  try {
    const { id } = await stead.runs.start(recoveryRun, { steps });
    const crashed = await spawnChild([scripts.worker, store], { ...cleanEnv(), STEAD_CRASH_AT: `after-commit:s-${killAfter}` }).exited;
    if (crashed.signal !== "SIGKILL") throw new Error(`W3 worker was expected to be SIGKILLed at s-${killAfter}; it exited ${crashed.code ?? crashed.signal}: ${crashed.stderr}`);
    const before = (await stead.runs.journal(id)).filter((s) => s.status === "completed").length;
    if (before !== killAfter) throw new Error(`W3: ${before} steps were journaled at the kill, expected ${killAfter}`);

    const spawnedAt = Date.now();
    if (via === "library") {
      const resumed = await spawnChild([scripts.worker, store], cleanEnv()).exited;
      if (resumed.code !== 0) throw new Error(`W3 recovering worker exited ${resumed.code ?? resumed.signal}: ${resumed.stderr}`);
    } else {
      // `stead worker` runs until signalled: stop it once the run has completed.
      const cli = spawnChild([CLI, "worker", scripts.definition, "--store", store], cleanEnv());
      const deadline = Date.now() + 30_000;
      while ((await stead.runs.get(id)).status !== "completed") {
        if (cli.child.exitCode !== null || Date.now() > deadline) {
          cli.child.kill("SIGKILL");
          const r = await cli.exited;
          throw new Error(`W3 \`stead worker\` did not complete the run (exit ${r.code ?? r.signal}): ${r.stderr}`);
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      cli.child.kill("SIGTERM");
      const r = await cli.exited;
      if (r.code !== 0) throw new Error(`W3 \`stead worker\` exited ${r.code ?? r.signal} on SIGTERM: ${r.stderr}`);
    }
    const events = await stead.runs.events({ runId: id });
    const resumedAt = events.find((e) => e.type === "step.completed" && e.data.step === next);
    if (!resumedAt) throw new Error(`W3: no step.completed event for ${next}`);
    const again = events.filter((e) => e.type === "step.completed" && e.data.step === `s-${killAfter}`).length;
    if (again !== 1) throw new Error(`W3: step s-${killAfter} completed ${again} times; a completed step must never run again`);
    if ((await stead.runs.get(id)).status !== "completed") throw new Error(`W3 run ${id} did not complete after recovery`);
    return resumedAt.at - spawnedAt;
  } finally {
    await stead.close();
  }
}
