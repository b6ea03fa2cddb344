/**
 * Full disks for storage tests: a file that fills its file system to the last byte, and (as root)
 * a private Postgres server whose data directory is on a small tmpfs of its own.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createStead, type Stead } from "../../src/index.js";
import type { Sandbox } from "../fixtures/crash/harness.js";
import { startPrivateServer, type PrivateServer } from "../setup/postgres.js";

/** Mounting a tmpfs needs root. */
export const ROOT = process.getuid?.() === 0;

/** Writes `path` until its file system has no byte left (ENOSPC). */
export function fillToTheLastByte(path: string): void {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
}

export interface PostgresOnTmpfs {
  /** A fresh database of the server, and a Stead on it. */
  url: string;
  stead: Stead;
  /** The tmpfs the server's data directory is on: a file here fills the server's disk. */
  mount: string;
}

/**
 * Runs `body` with a private Postgres server whose data directory is on a 64 MiB tmpfs inside
 * `box`; unmounts, stops and removes everything after, whatever `body` did.
 */
export async function withPostgresOnTmpfs(box: Sandbox, label: string, body: (pg: PostgresOnTmpfs) => Promise<void>): Promise<void> {
  // As root the server runs as the postgres user, which must reach its data dir inside the sandbox.
  chmodSync(box.dir, 0o755);
  const mount = join(box.dir, "pgfs");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m,mode=0777", "tmpfs", mount]);
  let server: PrivateServer | undefined;
  let stead: Stead | undefined;
  try {
    server = await startPrivateServer({ dataDir: join(mount, "pgdata") });
    const db = await server.freshDatabase(label);
    stead = createStead({ store: db.url });
    await stead.ready();
    await body({ url: db.url, stead, mount });
  } finally {
    await box.killAll();
    await stead?.close();
    await server?.close();
    execFileSync("umount", ["-l", mount]);
    box.remove();
  }
}
