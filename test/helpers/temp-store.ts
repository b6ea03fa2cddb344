import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStead, SqliteStore, type Stead, type Worker, type WorkerOptions } from "../../src/index.js";

/** A fresh directory under the OS temp dir; `remove()` deletes it and everything in it. */
export function tempDir(prefix = "stead-test-"): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A path for a store file that does not exist yet, in a fresh temp dir. */
export function tempStorePath(): { path: string; remove: () => void } {
  const d = tempDir("stead-store-");
  return { path: join(d.dir, "stead.db"), remove: d.remove };
}

/** A migrated SqliteStore on a new temp file, and a cleanup that closes it and removes the file. */
export async function openTempSqliteStore(): Promise<{ store: SqliteStore; path: string; cleanup(): Promise<void> }> {
  const t = tempStorePath();
  const store = new SqliteStore({ path: t.path });
  await store.migrate();
  return {
    store,
    path: t.path,
    async cleanup() {
      await store.close();
      t.remove();
    },
  };
}

/** Worker defaults for tests: fast polling, short grace so a hanging step never stalls cleanup. */
export const FAST_WORKER = { pollMs: 20, graceMs: 200 } as const;

/** Options for `stead.run` / `stead.follow` in tests: fast polling of the in-process worker. */
export const FAST_FOLLOW = { pollMs: 20, graceMs: 1_000 } as const;

/**
 * Stead instances on fresh temp stores and their workers. `cleanup()` aborts every worker made
 * through `worker()` (tests leave steps hanging on purpose), closes the instances and removes the files.
 * Use one per test file: `const h = steadHarness(); afterEach(() => h.cleanup());`
 */
export function steadHarness(): {
  create(options?: { payloadLimitBytes?: number }): Stead;
  worker(stead: Stead, options: WorkerOptions): Worker;
  /** Errors the workers made through `worker()` reported. */
  errors: unknown[];
  cleanup(): Promise<void>;
} {
  const open: { stead: Stead; remove: () => void }[] = [];
  const workers: Worker[] = [];
  const errors: unknown[] = [];
  return {
    create(options = {}) {
      const t = tempStorePath();
      const stead = createStead({ store: t.path, ...options });
      open.push({ stead, remove: t.remove });
      return stead;
    },
    worker(stead, options) {
      const w = stead.worker({ ...FAST_WORKER, ...options });
      // Without a listener, an "error" event would throw inside the worker's poll loop.
      w.on("error", (e) => errors.push(e));
      workers.push(w);
      return w;
    },
    errors,
    async cleanup() {
      for (const w of workers.splice(0)) w.abortAll();
      errors.splice(0);
      for (const o of open.splice(0)) {
        await o.stead.close().catch(() => undefined);
        o.remove();
      }
    },
  };
}
