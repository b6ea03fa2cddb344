/**
 * A store an import or a restore is about to create: an SQLite file not there yet. If the import
 * fails (a refused dump or backup, a missing key, a plain dump into an encrypted store), the file,
 * its -wal, -shm, -journal and reserve, and the directories made for it are removed again, so a
 * refusal leaves nothing behind. A store that was there, and any Postgres database, is left as it
 * is (a refusal writes no row into it).
 */
import { existsSync, rmdirSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { storeLocation } from "../store/index.js";

export interface NewStore {
  /** Whether `discard` removes the store: an SQLite file not there before. */
  readonly removable: boolean;
  /** Removes what the import created; nothing when the store was there before. */
  discard(): void;
}

export function newStore(location: string | undefined): NewStore {
  const where = storeLocation(location);
  if (where.dialect !== "sqlite") return { removable: false, discard: () => undefined };
  const path = resolve(where.path);
  if (existsSync(path)) return { removable: false, discard: () => undefined };
  // The directories that are not there yet, deepest first: the ones the store's creation makes.
  const made: string[] = [];
  for (let dir = dirname(path); !existsSync(dir) && dirname(dir) !== dir; dir = dirname(dir)) made.push(dir);
  return {
    removable: true,
    discard() {
      for (const suffix of ["", "-wal", "-shm", "-journal", "-reserve"]) rmSync(`${path}${suffix}`, { force: true });
      for (const dir of made) {
        try {
          rmdirSync(dir);
        } catch {
          // Not empty: something else was put there meanwhile, and stays.
          return;
        }
      }
    },
  };
}
