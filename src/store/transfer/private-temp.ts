/**
 * Private temporary directories: an import's spool of a streamed dump, a restore's copy of its
 * backup. Each holds a whole store's rows (a plain store's in the clear), so it is made 0700 in the
 * temp directory (TMPDIR; its sticky bit keeps other users from renaming it), every file in it is
 * made 0600, and it is removed when its user is done with it, or failed.
 *
 * Hazard: a process ended by a signal runs no `finally` and no `exit` handler, and a library must
 * not take SIGINT over from the program it lives in. So what is still here when the process exits
 * is removed by an `exit` handler (process.exit, an uncaught error), and a skin that ends itself on
 * a signal (the CLI's import and restore) calls {@link removePrivateTempDirsSync} before it exits.
 * A SIGKILL leaves the directory behind: nothing runs then.
 *
 * The set of live directories is the one process-wide state here: what a process must remove as
 * it dies is the process's, whichever instance made it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const live = new Set<string>();
let hooked = false;

export interface PrivateTempDir {
  readonly path: string;
  /** Removes the directory and everything in it; safe to call twice. */
  remove(): Promise<void>;
}

/** A new directory, 0700, under the temp directory; `prefix` names what it is for (`stead-import-`). */
export function privateTempDir(prefix: string): PrivateTempDir {
  // mkdtemp makes the directory 0700 whatever the umask.
  const path = mkdtempSync(join(tmpdir(), prefix));
  live.add(path);
  if (!hooked) {
    hooked = true;
    process.on("exit", removePrivateTempDirsSync);
  }
  return {
    path,
    async remove() {
      await rm(path, { recursive: true, force: true });
      live.delete(path);
    },
  };
}

/** Removes every private temp directory of this process that is still there (a signal handler's last act). */
export function removePrivateTempDirsSync(): void {
  for (const path of live) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Exiting: what cannot be removed now is left, as a SIGKILL would leave it.
    }
    live.delete(path);
  }
}
