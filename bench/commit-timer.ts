import type { Store } from "../src/index.js";

/**
 * Measures the wall time a store spends in `commit` (its round trip and durable write), so a
 * per-step figure can be split into store time and engine time. Wraps the instance's own method;
 * the cost is one closure and two clock reads per commit.
 */
export function timeCommits(store: Store): { readonly ms: number; readonly calls: number } {
  const stats = { ms: 0, calls: 0 };
  const inner = store.commit.bind(store);
  store.commit = async (units, options) => {
    const t0 = performance.now();
    try {
      return await inner(units, options);
    } finally {
      stats.ms += performance.now() - t0;
      stats.calls += 1;
    }
  };
  return stats;
}
