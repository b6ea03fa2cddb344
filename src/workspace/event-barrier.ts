/**
 * A barrier for file-system events: `pass()` resolves true once every event of a write that
 * returned before it was called has been delivered to this thread's `fs.watch` listeners.
 *
 * How: it writes a marker file into a private directory it watches, and waits for the marker's
 * own event. Invariant this rests on: libuv reads every `fs.watch` of one event loop from a single
 * inotify queue, which the kernel fills in the order the operations happened and libuv hands out
 * in that order, each listener called synchronously. So the marker's event comes after every
 * event queued before it, in whichever watched directory. Turns of the event loop prove nothing:
 * a loaded machine was seen delivering a step's events after two of them.
 *
 * `pass()` resolves false when it cannot tell: no private directory could be made or watched, or
 * the marker's event did not arrive within the timeout (a queue overflow drops events). The
 * caller then scans in full, which is always correct.
 *
 * Hazard: the ordering argument is libuv's inotify (Linux). Where fs.watch is built otherwise
 * the barrier is best effort; the timeout still bounds the wait.
 */
import { mkdtempSync, rmSync, unlinkSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** How long a marker's event may take before the barrier gives up (and the capture scans in full). */
const MARKER_TIMEOUT_MS = 2_000;

export class EventBarrier {
  private dir: string | undefined;
  private watcher: FSWatcher | undefined;
  private next = 0;
  private readonly waiting = new Map<string, (arrived: boolean) => void>();

  /** Sets up the private directory and its watch; without them every `pass()` is false. */
  start(): void {
    try {
      this.dir = mkdtempSync(join(tmpdir(), "stead-watch-"));
      this.watcher = watch(this.dir, { persistent: false }, (_event, filename) => {
        const name = filename === null ? null : filename.toString();
        if (name !== null) this.waiting.get(name)?.(true);
      });
      this.watcher.on("error", () => this.close());
    } catch {
      this.close();
    }
  }

  async pass(): Promise<boolean> {
    const dir = this.dir;
    if (dir === undefined || this.watcher === undefined) return false;
    const name = String(++this.next);
    const path = join(dir, name);
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.waiting.set(name, resolve);
      // Kept referenced: the watch is not (it must not hold an idle process open), so while a
      // capture waits this timer is what keeps the process alive until the marker's event comes.
      timer = setTimeout(() => resolve(false), MARKER_TIMEOUT_MS);
    });
    try {
      writeFileSync(path, "");
    } catch {
      this.waiting.delete(name);
      clearTimeout(timer);
      return false;
    }
    const ok = await arrived;
    this.waiting.delete(name);
    clearTimeout(timer);
    try {
      unlinkSync(path);
    } catch {
      // Gone with the directory (closed meanwhile): nothing to remove.
    }
    return ok;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const resolve of this.waiting.values()) resolve(false);
    this.waiting.clear();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}
