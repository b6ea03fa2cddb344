import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve } from "node:path";

const LOCAL_IMPORT =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g;
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx"];

function resolveLocal(fromFile: string, spec: string): string | undefined {
  const base = resolve(dirname(fromFile), spec);
  const candidates = [base];
  const ext = extname(base);
  if ([".js", ".mjs", ".cjs", ".jsx"].includes(ext)) {
    const stem = base.slice(0, -ext.length);
    candidates.push(stem + ".ts", stem + ".tsx", stem + ".mts", stem + ".cts");
  }
  for (const e of EXTENSIONS) candidates.push(base + e);
  for (const e of EXTENSIONS) candidates.push(join(base, "index" + e));
  for (const c of candidates) {
    try {
      if (existsSync(c) && statSync(c).isFile()) return c;
    } catch {
      // unreadable candidates are simply not part of the graph
    }
  }
  return undefined;
}

const cache = new Map<string, string>();

/**
 * Hash of a module and every module it imports by a relative path, transitively (packages under
 * node_modules are not followed). Stable across machines: paths are hashed relative to the root module.
 */
export function moduleGraphFingerprint(entry: string): string {
  const hit = cache.get(entry);
  if (hit) return hit;
  const seen = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    if (file === undefined || seen.has(file)) continue;
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      seen.set(file, "unreadable");
      continue;
    }
    seen.set(file, createHash("sha256").update(text).digest("hex"));
    for (const m of text.matchAll(LOCAL_IMPORT)) {
      const spec = m[1];
      if (!spec) continue;
      const target = resolveLocal(file, spec);
      if (target && !target.includes(`${"/"}node_modules${"/"}`)) queue.push(target);
    }
  }
  const root = dirname(entry);
  const h = createHash("sha256");
  for (const [file, digest] of [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    h.update(relative(root, file)).update("\0").update(digest).update("\n");
  }
  const fp = h.digest("hex").slice(0, 16);
  cache.set(entry, fp);
  return fp;
}

export function textFingerprint(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
