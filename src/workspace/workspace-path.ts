import { statSync, type Stats } from "node:fs";
import { resolve } from "node:path";
import { SteadError } from "../errors.js";

/**
 * The absolute path of a workspace given to a run, after checking it is an existing directory:
 * STEAD_BAD_PATH (naming the path and the fix) otherwise, before anything is written.
 *
 * Kept apart from the scanner (and loaded at start-up without it): starting a run checks its path.
 */
export function checkWorkspace(path: string): string {
  const abs = resolve(path);
  statRoot(abs);
  return abs;
}

export function statRoot(root: string): Stats {
  let st: Stats;
  try {
    st = statSync(root);
  } catch (e) {
    throw badRoot(root, (e as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : `cannot be read (${(e as Error).message})`);
  }
  if (!st.isDirectory()) throw badRoot(root, "is not a directory");
  return st;
}

export function badRoot(root: string, why: string): SteadError {
  return new SteadError("STEAD_BAD_PATH", `workspace ${root} ${why}`, { path: root, fix: "pass the path of an existing directory as the workspace" });
}
