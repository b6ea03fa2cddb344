/** Real directories and real stores for the workspace tests. */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CaptureResult } from "../../src/workspace/index.js";
import type { Store } from "../../src/store/types.js";

export type Spec = Record<string, string | Buffer | { content: string | Buffer; mode?: number; mtime?: number } | { link: string } | { dir: true }>;

/** Writes `spec` under `root` (paths "/"-separated); a mode or mtime is applied after the write. */
export function writeTree(root: string, spec: Spec): void {
  for (const [path, v] of Object.entries(spec)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof v === "string" || Buffer.isBuffer(v)) {
      writeFileSync(full, v);
    } else if ("link" in v) {
      symlinkSync(v.link, full);
    } else if ("dir" in v) {
      mkdirSync(full, { recursive: true });
    } else {
      writeFileSync(full, v.content);
      if (v.mode !== undefined) chmodSync(full, v.mode);
      if (v.mtime !== undefined) utimesSync(full, new Date(v.mtime), new Date(v.mtime));
    }
  }
}

export type Listing = Record<string, string>;

/**
 * Everything under `root`: "file <mode> <content>", "link <target>", "dir <mode>" per path,
 * skipping the names in `skip` at any depth.
 */
export function listTree(root: string, skip: readonly string[] = []): Listing {
  const out: Listing = {};
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (skip.includes(name)) continue;
      const full = join(dir, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(full)}`;
      else if (st.isDirectory()) {
        out[path] = `dir ${mode}`;
        walk(full, path);
      } else out[path] = `file ${mode} ${readFileSync(full, "utf8")}`;
    }
  };
  walk(root, "");
  return out;
}

/** Commits a capture as the step at its seq (or alone for a start snapshot), as the engine would. */
export async function commitCapture(store: Store, runId: string, r: CaptureResult): Promise<void> {
  if (!r.ok) throw new Error(`capture failed: ${r.reason}`);
  const s = r.snapshot;
  const steps = s.stepId !== null && s.source === "step" ? [{ seq: s.seq, stepId: s.stepId, kind: "tool" as const, status: "completed" as const, attempt: 1, output: "null", startedAt: s.createdAt, completedAt: s.createdAt }] : [];
  const [res] = await store.commit([[{ runId, steps, snapshots: [s], events: r.events }]]);
  if (!res?.ok) throw new Error(`commit refused: ${JSON.stringify(res)}`);
}

export const newRun = (id: string, workspace: string | null = null) => ({ id, definition: "ws-test", module: null, fingerprint: "fp", input: "null", createdAt: Date.now(), workspace });
