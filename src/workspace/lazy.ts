/**
 * Workspaces, loaded on first use: a worker whose runs have no workspace, and a server that never
 * reads a snapshot, do not pay for the scanner, the trees and the blob codec at start-up. The
 * module is the one a static import would load, so its classes are the same.
 */
/** The workspace module, as `workspace()` resolves to it. */
export type Workspace = typeof import("./index.js");

let loading: Promise<Workspace> | undefined;

export const workspace = (): Promise<Workspace> => (loading ??= import("./index.js"));

/** See gc.ts. */
export async function gcWorkspaces(...args: Parameters<Workspace["gcWorkspaces"]>): ReturnType<Workspace["gcWorkspaces"]> {
  return (await workspace()).gcWorkspaces(...args);
}

/** See restore.ts. */
export async function restoreSnapshot(...args: Parameters<Workspace["restoreSnapshot"]>): ReturnType<Workspace["restoreSnapshot"]> {
  return (await workspace()).restoreSnapshot(...args);
}

/** See snapshot-diff.ts. */
export async function diffSnapshots(...args: Parameters<Workspace["diffSnapshots"]>): ReturnType<Workspace["diffSnapshots"]> {
  return (await workspace()).diffSnapshots(...args);
}
