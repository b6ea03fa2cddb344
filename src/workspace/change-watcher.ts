/**
 * Which paths of a workspace changed since a point in time, from file-system events: one
 * `fs.watch` per directory that is not ignored (so `node_modules` and other excluded trees cost no
 * watch), directories added as they appear, re-walked when their `.gitignore` changes.
 *
 * Every event gets the next number of `counter`; `since(mark)` gives the paths with an event
 * after `mark`, or undefined when it cannot tell (a watch could not be set up, an event without a
 * name, or more events than it trusts the kernel's queue to have kept): the caller then scans in
 * full. Once `drain()` resolves true, events for writes that returned before it was called have
 * been counted (see EventBarrier); false: it cannot tell, and the caller scans in full.
 *
 * Hazards: network file systems and writes through mmap produce no events; on such workspaces
 * turn watching off (captures then stat every file).
 */
import { lstatSync, readdirSync, readFileSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { EventBarrier } from "./event-barrier.js";
import { IgnoreRules } from "./ignore-rules.js";
import type { ResolvedScanOptions } from "./options.js";

/** More events than this between two captures: the kernel queue may have overflowed; scan in full. */
const TRUSTED_EVENTS = 20_000;

interface Watched {
  watcher: FSWatcher;
  rules: IgnoreRules;
}

export class ChangeWatcher {
  counter = 0;
  /** Why events cannot be trusted any more (watching has stopped helping). */
  broken: string | undefined;
  private readonly watched = new Map<string, Watched>();
  private readonly last = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private readonly barrier = new EventBarrier();
  /** Events with no usable name: everything before their number is unknown. */
  private blindAt = -1;
  private closed = false;

  constructor(
    readonly root: string,
    private readonly options: ResolvedScanOptions,
  ) {}

  start(): void {
    this.barrier.start();
    this.watchDir(this.root, "", IgnoreRules.root(this.options.exclude));
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Paths ("/"-separated, relative) with an event after `mark`; undefined: scan everything. */
  since(mark: number): Set<string> | undefined {
    if (this.broken !== undefined || this.blindAt > mark || this.counter - mark > TRUSTED_EVENTS) return undefined;
    const out = new Set<string>();
    for (const [p, n] of this.last) if (n > mark) out.add(p);
    return out;
  }

  /** Drops what is known about events up to `mark` (no capture will ask about them again). */
  forget(mark: number): void {
    for (const [p, n] of this.last) if (n <= mark) this.last.delete(p);
  }

  /** True once the events of every write that returned before the call have been counted. */
  drain(): Promise<boolean> {
    return this.barrier.pass();
  }

  close(): void {
    this.closed = true;
    this.barrier.close();
    for (const w of this.watched.values()) w.watcher.close();
    this.watched.clear();
    this.listeners.clear();
  }

  private record(path: string): void {
    this.last.set(path, ++this.counter);
    for (const fn of this.listeners) fn();
  }

  private unwatch(path: string): void {
    for (const [p, w] of this.watched) {
      if (p !== path && !p.startsWith(path === "" ? "" : `${path}/`)) continue;
      w.watcher.close();
      this.watched.delete(p);
    }
  }

  private watchDir(abs: string, rel: string, parentRules: IgnoreRules): void {
    if (this.closed || this.broken !== undefined || this.watched.has(rel)) return;
    let rules = parentRules;
    let dirs: string[];
    try {
      const dirents = readdirSync(abs, { withFileTypes: true });
      if (this.options.gitignore && dirents.some((d) => d.name === ".gitignore" && d.isFile())) rules = rules.withGitignore(rel, readFileSync(join(abs, ".gitignore"), "utf8"));
      const own = rules;
      const watcher = watch(abs, { persistent: false }, (_event, filename) => this.onEvent(abs, rel, own, parentRules, filename === null ? null : filename.toString()));
      watcher.on("error", () => {
        // The directory went away (its parent's event covers it) or the watch failed.
        watcher.close();
        if (this.watched.get(rel)?.watcher === watcher) this.watched.delete(rel);
      });
      this.watched.set(rel, { watcher, rules: own });
      dirs = dirents.filter((d) => d.isDirectory()).map((d) => d.name);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // A directory that vanished while it was walked is an event of its parent; running out of
      // watches (ENOSPC) or anything else means events can no longer be trusted.
      if (code !== "ENOENT" && code !== "ENOTDIR") this.broken = `cannot watch ${abs}: ${code ?? (e as Error).message}`;
      return;
    }
    for (const name of dirs) {
      const path = rel ? `${rel}/${name}` : name;
      if (!rules.ignores(path, true)) this.watchDir(join(abs, name), path, rules);
    }
  }

  private onEvent(abs: string, rel: string, rules: IgnoreRules, parentRules: IgnoreRules, name: string | null): void {
    if (this.closed) return;
    if (name === null) {
      this.blindAt = this.counter + 1;
      this.record(rel);
      return;
    }
    const path = rel ? `${rel}/${name}` : name;
    let isDir = false;
    try {
      isDir = lstatSync(join(abs, name)).isDirectory();
    } catch {
      // Gone: its watches go, so a directory made again under that name is watched anew.
      this.unwatch(path);
    }
    if (name === ".gitignore" && this.options.gitignore) {
      // The rules of this whole subtree changed: watch it again under the new ones.
      this.unwatch(rel);
      this.watchDir(abs, rel, parentRules);
      this.record(path);
      return;
    }
    if (rules.ignores(path, isDir)) return;
    if (isDir && !this.watched.has(path)) this.watchDir(join(abs, name), path, rules);
    this.record(path);
  }
}
