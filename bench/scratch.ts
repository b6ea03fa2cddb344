import { scratchDir } from "./report.js";

/** Runs `fn` in a fresh temp directory, removed afterwards. */
export async function inScratch<T>(label: string, fn: (dir: string) => Promise<T> | T): Promise<T> {
  const s = scratchDir(label);
  try {
    return await fn(s.dir);
  } finally {
    s.cleanup();
  }
}
