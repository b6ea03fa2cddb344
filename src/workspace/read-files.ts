/**
 * A snapshot's files as data, read from the store and written nowhere: what a remote caller gets
 * instead of a restore into the server's disk. Contents are bounded by a byte budget: a file
 * whose content would pass it is listed without it (and counted), never cut short.
 */
import { SteadError } from "../errors.js";
import type { SnapshotRow, SnapshotsAndBlobs } from "../store/types.js";
import { decodeBlob } from "./blob-codec.js";
import { isSafeName, walkFiles, type FileEntry, type LinkEntry } from "./tree.js";
import type { SnapshotFile } from "../client/api-types.js";
import { TreeLoader } from "./tree-loader.js";

/** Default budget for the contents of one read. */
export const DEFAULT_READ_BYTES = 1024 * 1024;
/** The largest budget a caller may ask for. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** A file of a snapshot as a read gives it: the wire shape (client/api-types.ts), declared there once. */
export type { SnapshotFile } from "../client/api-types.js";

export interface ReadFilesOptions {
  /** Only these paths: a file's, or a directory's (everything under it). Default: every file. */
  paths?: readonly string[];
  /** Give contents (default true); false lists the files only. */
  content?: boolean;
  /** Budget for the contents, in bytes (default 1 MiB, at most 16 MiB). */
  maxBytes?: number;
}

export interface ReadFiles {
  files: SnapshotFile[];
  /** Files listed without their content because it would pass the budget. */
  omitted: number;
}

/** A path a caller names, checked: "/"-separated names, none empty, `.` or `..`. */
function checkPath(p: unknown): string {
  const parts = typeof p === "string" ? p.replace(/\/+$/, "").split("/") : [];
  if (typeof p !== "string" || p.length > 4096 || parts.length === 0 || !parts.every(isSafeName)) {
    throw new SteadError("STEAD_BAD_OPTION", `${JSON.stringify(typeof p === "string" ? p.slice(0, 100) : p)} is not a path inside a workspace`, {
      fix: 'name a file or directory relative to the workspace root, "/"-separated (e.g. "src/main.ts")',
      field: "paths",
    });
  }
  return parts.join("/");
}

export function checkReadOptions(o: ReadFilesOptions): { paths: string[] | undefined; content: boolean; maxBytes: number } {
  const maxBytes = o.maxBytes ?? DEFAULT_READ_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_READ_BYTES) {
    throw new SteadError("STEAD_BAD_OPTION", `maxBytes must be a whole number from 0 to ${MAX_READ_BYTES}, not ${String(o.maxBytes)}`, { fix: "ask for fewer bytes, or name fewer paths", field: "maxBytes" });
  }
  return { paths: o.paths?.map(checkPath), content: o.content ?? true, maxBytes };
}

const isUtf8 = (b: Buffer): boolean => Buffer.from(b.toString("utf8"), "utf8").equals(b);

export async function readSnapshotFiles(store: SnapshotsAndBlobs, snapshot: Pick<SnapshotRow, "root">, options: ReadFilesOptions = {}): Promise<ReadFiles> {
  const o = checkReadOptions(options);
  const tree = await new TreeLoader(store).load(snapshot.root);
  const wanted = (path: string) => o.paths === undefined || o.paths.some((p) => path === p || path.startsWith(`${p}/`));
  const entries = [...walkFiles(tree)].filter(([path]) => wanted(path));
  // Budget in path order, so the same read gives the same answer.
  let left = o.maxBytes;
  let omitted = 0;
  const given = new Set<string>();
  if (o.content) {
    for (const [path, e] of entries) {
      if (e.kind !== "file") continue;
      if (e.size <= left) {
        given.add(path);
        left -= e.size;
      } else omitted++;
    }
  }
  const hashes = [...new Set(entries.filter(([p, e]) => e.kind === "file" && given.has(p)).map(([, e]) => (e as FileEntry).hash))];
  const found = new Map((hashes.length ? await store.getBlobs(hashes) : []).map((b) => [b.hash, b]));
  const files = entries.map(([path, e]: [string, FileEntry | LinkEntry]): SnapshotFile => {
    if (e.kind === "link") return { path, kind: "link", mode: null, size: null, hash: null, target: e.target, encoding: null, content: null };
    const base = { path, kind: "file" as const, mode: e.mode, size: e.size, hash: e.hash, target: null };
    if (!given.has(path)) return { ...base, encoding: null, content: null };
    const blob = found.get(e.hash);
    if (!blob) {
      throw new SteadError("STEAD_SNAPSHOT_DAMAGED", `the content of ${path} (blob ${e.hash.slice(0, 12)}) is missing from the store`, {
        fix: "the snapshot is incomplete (its blobs were deleted); read another snapshot of the run",
      });
    }
    const bytes = decodeBlob(e.hash, blob.data);
    return isUtf8(bytes) ? { ...base, encoding: "utf8", content: bytes.toString("utf8") } : { ...base, encoding: "base64", content: bytes.toString("base64") };
  });
  return { files, omitted };
}
