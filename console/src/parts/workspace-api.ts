/**
 * A run's workspace as the server answers it (src/server/routes/workspace.ts): snapshots, a
 * step's file tree, a file's bytes at a step (text when the server calls it text/plain, else
 * binary: never rendered), the diff of two steps. A step is a step id, or `start`.
 */
import type { SnapshotFile, SnapshotList, SnapshotTree, SnapshotView, TreeDiff } from "../../../src/client/index.js";
import { rawGet, refusalOf } from "../api.js";

/** A snapshot, a tree's file and a diff, as the API declares them (src/client/api-types.ts). */
export type Snapshot = SnapshotView;
export type TreeFile = SnapshotFile;
export type { TreeDiff };

export type FileContent = { kind: "text"; text: string } | { kind: "binary"; size: number };

/** How a snapshot is named in a URL: its step id, or `start`. */
export const stepOf = (s: Snapshot): string => s.stepId ?? "start";

const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

export const snapshots = (runId: string) => rawGet<SnapshotList>(`${runPath(runId)}/snapshots`);

export const tree = (runId: string, step: string) => rawGet<SnapshotTree>(`${runPath(runId)}/snapshots/${encodeURIComponent(step)}/tree`);

export const diff = (runId: string, from: string, to: string) => rawGet<TreeDiff>(`${runPath(runId)}/diff`, { from, to });

/** The URL of one file's bytes at a step (a download link for a binary file). */
export const fileUrl = (runId: string, step: string, path: string) => `/api/v1${runPath(runId)}/snapshots/${encodeURIComponent(step)}/file?${new URLSearchParams({ path }).toString()}`;

export const tarballUrl = (runId: string, step: string) => `/api/v1${runPath(runId)}/snapshots/${encodeURIComponent(step)}/tarball`;

export async function file(runId: string, step: string, path: string): Promise<FileContent> {
  const res = await fetch(fileUrl(runId, step, path));
  if (!res.ok) throw await refusalOf(res);
  if ((res.headers.get("content-type") ?? "").startsWith("text/plain")) return { kind: "text", text: await res.text() };
  const size = res.headers.get("content-length");
  if (size === null) return { kind: "binary", size: (await res.arrayBuffer()).byteLength };
  void res.body?.cancel();
  return { kind: "binary", size: Number(size) };
}
