import { resolve } from "node:path";
import { statRoot } from "./scan.js";

/**
 * The absolute path of a workspace given to a run, after checking it is an existing directory:
 * STEAD_BAD_PATH (naming the path and the fix) otherwise, before anything is written.
 */
export function checkWorkspace(path: string): string {
  const abs = resolve(path);
  statRoot(abs);
  return abs;
}
