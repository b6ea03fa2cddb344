/**
 * `stead worker --backup-dir DIR --backup-every DURATION --backup-keep N`: a worker that also takes
 * backups of its (SQLite) store on a schedule, keeping the newest N.
 *
 * Each backup is `stead backup --to` in a child process (this same executable), so the copy never
 * blocks the worker's event loop (VACUUM INTO is synchronous for as long as it takes, and a worker
 * must keep renewing its leases meanwhile), and what a scheduled backup is is exactly what the
 * command is. The first is taken at start. One backup at a time: a tick that finds the last one
 * still running is skipped.
 * Only names this schedule gives (`stead-backup-<UTC time>.db`) are ever pruned.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { SteadError } from "../errors.js";
import { formatDuration, parseDuration } from "../engine/durations.js";
import { parsePositiveInt } from "./context.js";

export interface BackupScheduleOptions {
  backupDir?: string;
  backupEvery?: string;
  backupKeep?: string;
}

export interface BackupSchedule {
  dir: string;
  everyMs: number;
  keep: number;
}

const NAME = /^stead-backup-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z\.db$/;
/** Shortest period taken: a backup reads the whole store. */
const MIN_EVERY_MS = 500;

/** The schedule the options ask for (undefined: none), checked before any store is opened. */
export function backupSchedule(o: BackupScheduleOptions): BackupSchedule | undefined {
  if (o.backupDir === undefined) {
    if (o.backupEvery !== undefined || o.backupKeep !== undefined) {
      throw new SteadError("STEAD_BAD_OPTION", `${o.backupEvery !== undefined ? "--backup-every" : "--backup-keep"} needs --backup-dir`, {
        fix: "name the directory backups go to: --backup-dir <dir> --backup-every 6h --backup-keep 7",
      });
    }
    return undefined;
  }
  const dir = resolve(o.backupDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new SteadError("STEAD_BAD_PATH", `--backup-dir ${dir} is not a directory`, { fix: "create it first (mkdir -p), or name an existing directory" });
  }
  const everyMs = parseDuration(o.backupEvery ?? "24h", "--backup-every");
  if (everyMs < MIN_EVERY_MS) {
    throw new SteadError("STEAD_BAD_OPTION", `--backup-every ${o.backupEvery ?? ""} is shorter than ${formatDuration(MIN_EVERY_MS)}`, { fix: "take backups less often, e.g. --backup-every 1h" });
  }
  return { dir, everyMs, keep: parsePositiveInt(o.backupKeep ?? "7", "--backup-keep") };
}

export interface BackupEvents {
  taken(line: string): void;
  failed(line: string): void;
}

/** Takes backups of `store` on `schedule` until stopped. */
export class ScheduledBackups {
  private timer: NodeJS.Timeout | undefined;
  private child: ChildProcess | undefined;
  private stopped = false;

  constructor(
    private readonly store: string,
    private readonly schedule: BackupSchedule,
    private readonly events: BackupEvents,
  ) {}

  /** Takes one backup now (a worker restarted more often than the period would otherwise take none), then one every period. */
  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.schedule.everyMs);
  }

  /** Stops the schedule; a backup being taken is ended (its partial file is removed). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGKILL");
      await gone;
    }
  }

  private tick(): void {
    if (this.stopped || this.child) return;
    const file = join(this.schedule.dir, `stead-backup-${new Date().toISOString().replace(/[:.]/g, "-")}.db`);
    // This executable again (its loader flags too): `stead backup --to` in a process of its own.
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? "", "backup", "--to", file, "--store", this.store], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    let err = "";
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (err += d.slice(0, 4000)));
    child.once("exit", (code, signal) => {
      this.child = undefined;
      // A killed child cannot remove its own partial file.
      if (code !== 0) rmSync(join(this.schedule.dir, `.${file.slice(this.schedule.dir.length + 1)}.${child.pid ?? 0}.partial`), { force: true });
      if (code === 0) {
        const pruned = this.prune();
        this.events.taken(`backup taken: ${file}${pruned.length ? `; removed ${pruned.length} older (keeping ${this.schedule.keep})` : ""}`);
      } else if (!this.stopped) {
        this.events.failed(`backup to ${file} failed (${signal ?? `exit ${String(code)}`}): ${err.trim().replace(/^stead: /, "") || "no message"}`);
      }
    });
  }

  /** Removes this schedule's backups beyond the newest `keep`; returns their names. */
  private prune(): string[] {
    const ours = readdirSync(this.schedule.dir).filter((n) => NAME.test(n)).sort();
    const old = ours.slice(0, Math.max(0, ours.length - this.schedule.keep));
    for (const n of old) rmSync(join(this.schedule.dir, n), { force: true });
    return old;
  }
}
