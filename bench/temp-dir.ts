import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A fresh directory under the OS temp dir: the Stead store and the raw reference file live on the
 * same disk, so their fsync costs are comparable.
 */
function scratchDir(label: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `stead-bench-${label}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `fn` in a fresh temp directory, removed afterwards. */
export async function inScratch<T>(label: string, fn: (dir: string) => Promise<T> | T): Promise<T> {
  const s = scratchDir(label);
  try {
    return await fn(s.dir);
  } finally {
    s.cleanup();
  }
}
