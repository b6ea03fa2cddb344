import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BIN = join(ROOT, "bin", "stead.js");
export const FIXTURES = join(ROOT, "test", "fixtures", "cli");

/** The CLI runs from dist/: `npm test` builds first; alone, run `npm run build`. */
export function requireBuild(): void {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("dist/cli/main.js is missing: run `npm run build` before these tests");
  }
}

export function tempDir(prefix = "stead-cli-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The environment of a spawned CLI: no inherited STEAD_* (store location, crash points). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STEAD_")) env[k] = v;
  return { ...env, USER: "tester", ...extra };
}

/** `stead ps --json` entries. */
export interface Summary {
  id: string;
  status: string;
  waitingFor: { kind: string; name: string }[];
  lastStep: { seq: number; id: string; kind: string; status: string; attempt: number } | null;
}

/** `stead status --json`. */
export interface StatusJson {
  run: { id: string; status: string; output: unknown; module: string | null };
  journal: { id: string; status: string; kind: string }[];
  waits: { name: string; kind: string; status: string }[];
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  done: Promise<CliResult>;
}

export interface CliOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Written to the process's standard input, which is then closed (default: closed at once, empty). */
  stdin?: string | Buffer;
  /** The process's umask, set by a shell that then execs node (octal text, e.g. "027"). */
  umask?: string;
}

/** Spawns `node bin/stead.js ...args` in `cwd`; the process is killed if it outlives `timeoutMs`. */
export function spawnCli(args: readonly string[], cwd: string, options: CliOptions = {}): CliProcess {
  const [cmd, argv] = options.umask === undefined ? [process.execPath, [BIN, ...args]] : ["/bin/sh", ["-c", 'umask "$0" && exec "$@"', options.umask, process.execPath, BIN, ...args]];
  const child = spawn(cmd, argv, { cwd, env: childEnv(options.env), stdio: "pipe" });
  // A process that exits without reading its input must not fail the test with EPIPE.
  child.stdin.on("error", () => undefined);
  if (options.stdin !== undefined) child.stdin.end(options.stdin);
  else child.stdin.end();
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const guard = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 45_000);
  const done = new Promise<CliResult>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      resolveDone({ code, signal, stdout: out, stderr: err });
    });
  });
  return { child, stdout: () => out, stderr: () => err, done };
}

export function cli(args: readonly string[], cwd: string, options: CliOptions = {}): Promise<CliResult> {
  return spawnCli(args, cwd, options).done;
}

const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Whether util-linux `script` is here to give a command a pseudo-terminal. */
export function hasScript(): boolean {
  return spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Runs `node bin/stead.js ...args` on a pseudo-terminal (util-linux `script`): its standard output
 * and error are a TTY, and arrive merged in `stdout` (line ends as "\n").
 */
export async function cliOnTty(args: readonly string[], cwd: string, options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  const command = ["exec", ...[process.execPath, BIN, ...args].map(shellWord)].join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], { cwd, env: childEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const guard = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 45_000);
  return new Promise<CliResult>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      resolveDone({ code, signal, stdout: out.replace(/\r\n/g, "\n"), stderr: err });
    });
  });
}

/** Non-empty lines of a text. */
export function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.trim() !== "");
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every row of every table of a Stead store, for before/after comparisons. */
export function dumpStore(path: string): Record<string, unknown[]> {
  const db = new Database(path, { fileMustExist: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all();
    return out;
  } finally {
    db.close();
  }
}

export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}
