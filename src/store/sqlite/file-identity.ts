/**
 * The store file a connection opened, and whether its path still names it. A file deleted (or
 * replaced) under an open connection still answers, from and into an inode no one else will ever
 * read: so a write into it must not be reported done, and a read of it must not be shown, since it
 * may hold what such a write (this process's, or another's that had the file open) left there.
 *
 * Invariant: once the path is seen naming no file or another file, the store stays lost for this
 * connection: every later read and write is refused with the same STEAD_STORE_LOST, without
 * looking again (a file put back at the path is another inode; reopening is the process's choice).
 */
import { statSync } from "node:fs";
import type { SteadError } from "../../errors.js";
import { storeLost } from "../faults.js";

export class FileIdentity {
  private lost: SteadError | undefined;

  private constructor(
    private readonly path: string,
    private readonly opened: { dev: bigint; ino: bigint } | undefined,
  ) {}

  /** The file at `path` now: call once the connection has opened it (no file there: nothing to watch). */
  static of(path: string): FileIdentity {
    const st = statSync(path, { bigint: true, throwIfNoEntry: false });
    return new FileIdentity(path, st ? { dev: st.dev, ino: st.ino } : undefined);
  }

  /** Refuses if the loss was seen already; does not look at the path (costs nothing). */
  assertNotLost(): void {
    if (this.lost) throw this.lost;
  }

  /**
   * Refuses unless the path names the opened file now. Called after a read or write: whatever it
   * read or wrote was then in the file the path names, since the open connection keeps the old
   * inode from being reused.
   */
  assertSame(): void {
    if (this.lost) throw this.lost;
    if (!this.opened) return;
    const st = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    if (!st) throw (this.lost = storeLost(this.path, "was deleted"));
    if (st.ino !== this.opened.ino || st.dev !== this.opened.dev) throw (this.lost = storeLost(this.path, "was replaced by another file"));
  }
}
