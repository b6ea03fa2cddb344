import { accessSync, constants, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { SteadError } from "../../errors.js";

/**
 * What this process may do with an SQLite store's files, told in terms a user can act on: which
 * path, and which permission is missing. A store in WAL mode is more than its file: SQLite keeps
 * `<file>-wal` and `<file>-shm` beside it, creating them on first open (so it needs write
 * permission on the directory unless they exist) and writing them on every read, except for a
 * read-only connection when they exist and may only be read.
 *
 * Hazard: access(2) answers for the real user, and root passes every permission check except a
 * read-only file system. These checks explain refusals; SQLite's own errors remain the authority.
 */

const { R_OK, W_OK, X_OK } = constants;

function denied(path: string, mode: number): NodeJS.ErrnoException | undefined {
  try {
    accessSync(path, mode);
    return undefined;
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
}

/** true, false (no such file), or "unreachable" (a directory above it may not be searched). */
function exists(path: string): boolean | "unreachable" {
  try {
    statSync(path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? false : "unreachable";
  }
}

/** The deepest directory at or above `dir` that exists. */
function nearestExisting(dir: string): string {
  let at = dir;
  while (exists(at) === false && dirname(at) !== at) at = dirname(at);
  return at;
}

const readOnlyFs = (e: NodeJS.ErrnoException) => e.code === "EROFS";

/** The two files SQLite keeps beside a store in WAL mode. */
function sideFiles(path: string): { wal: string; shm: string; names: string } {
  const name = basename(path);
  return { wal: `${path}-wal`, shm: `${path}-shm`, names: `${name}-wal and ${name}-shm` };
}

function notWritable(message: string, fix: string, path: string): SteadError {
  return new SteadError("STEAD_STORE_NOT_WRITABLE", message, { path, fix });
}

/** Why this process cannot write (or create) the store at `path`; undefined when nothing is missing. */
export function cannotWrite(path: string): SteadError | undefined {
  const there = exists(path);
  if (there === "unreachable") return cannotReach(path);
  if (!there) {
    const at = nearestExisting(dirname(path));
    const e = denied(at, W_OK | X_OK);
    if (!e) return undefined;
    if (readOnlyFs(e)) return notWritable(`cannot create the store ${path}: ${at} is on a read-only file system`, "choose a --store path on a writable file system", path);
    return notWritable(
      `cannot create the store ${path}: this user has no write permission on the directory ${at}`,
      `give this user write permission on ${at}, or choose a --store path in a directory it can write`,
      path,
    );
  }
  const file = denied(path, W_OK);
  if (file && readOnlyFs(file)) {
    return notWritable(`cannot write the store ${path}: it is on a read-only file system`, "copy the store to a writable file system, or remount it read-write", path);
  }
  const unreadable = denied(path, R_OK);
  if (file || unreadable) {
    const what = file && unreadable ? "read and write permission" : file ? "write permission" : "read permission";
    return notWritable(
      `cannot write the store ${path}: this user has no ${what} on the file`,
      `give this user read and write permission on ${path}, or run the command as the user who owns it (read verbs such as ps, status and export need only read permission)`,
      path,
    );
  }
  const side = sideFiles(path);
  for (const f of [side.wal, side.shm]) {
    if (exists(f) === true && denied(f, R_OK | W_OK)) {
      return notWritable(`cannot write the store ${path}: this user has no write permission on ${f}, which SQLite writes beside the store`, `give this user read and write permission on ${f}`, path);
    }
  }
  if (exists(side.wal) === true && exists(side.shm) === true) return undefined;
  const dir = dirname(path);
  const d = denied(dir, W_OK | X_OK);
  if (!d) return undefined;
  if (readOnlyFs(d)) return notWritable(`cannot write the store ${path}: the directory ${dir} is on a read-only file system`, "copy the store to a writable file system, or remount it read-write", path);
  return notWritable(
    `cannot write the store ${path}: this user has no write permission on the directory ${dir}, where SQLite creates ${side.names} beside the store`,
    `give this user write permission on ${dir}`,
    path,
  );
}

/** Why this process cannot read the store at `path` through a read-only connection; undefined when nothing is missing. */
export function cannotRead(path: string): SteadError | undefined {
  const there = exists(path);
  if (there === "unreachable") return cannotReach(path);
  if (!there) return undefined;
  const notReadable = (message: string, fix: string) => new SteadError("STEAD_STORE_NOT_READABLE", message, { path, fix });
  if (denied(path, R_OK)) return notReadable(`cannot read the store ${path}: this user has no read permission on the file`, `give this user read permission on ${path}`);
  const side = sideFiles(path);
  for (const f of [side.wal, side.shm]) {
    if (exists(f) === true && denied(f, R_OK)) return notReadable(`cannot read the store ${path}: this user has no read permission on ${f}, which SQLite reads beside the store`, `give this user read permission on ${f}`);
  }
  if (exists(side.wal) === true && exists(side.shm) === true) return undefined;
  const dir = dirname(path);
  const d = denied(dir, W_OK | X_OK);
  if (!d) return undefined;
  const why = readOnlyFs(d)
    ? `which do not exist and cannot be created on the read-only file system at ${dir}`
    : `which do not exist, and this user has no write permission on the directory ${dir} to create them`;
  return notReadable(
    `cannot read the store ${path}: SQLite reads a store in WAL mode through ${side.names} beside it, ${why}`,
    readOnlyFs(d)
      ? `copy ${path} to a writable file system, or read it while a process that writes the store has it open (the files exist then)`
      : `give this user write permission on ${dir}, read it while a process that writes the store has it open (the files exist then), or copy ${path} somewhere this user can write`,
  );
}

/** A refusal when `path` cannot even be looked at (a directory above it may not be searched). */
export function unreachable(path: string): SteadError | undefined {
  return exists(path) === "unreachable" ? cannotReach(path) : undefined;
}

function cannotReach(path: string): SteadError {
  return new SteadError("STEAD_STORE_NOT_READABLE", `cannot reach the store ${path}: this user has no search (x) permission on a directory above it`, {
    path,
    fix: `give this user search permission on every directory on the way to ${dirname(path)}`,
  });
}

/** Errors of SQLite or the file system that mean "not permitted", not "not a store". */
export function isAccessError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return /^SQLITE_(READONLY|CANTOPEN|PERM|AUTH)/.test(code) || code === "EACCES" || code === "EPERM" || code === "EROFS";
}
