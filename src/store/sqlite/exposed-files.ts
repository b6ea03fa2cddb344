/**
 * A store whose files other users of the machine may read or change: one created before Stead made
 * its files 0600 (an older Stead left them as the umask had it, usually 0644), or one chmod-ed so.
 * SQLite gives the -wal and -shm it creates the store file's mode, so they follow it.
 *
 * Warned about, once per process and store, on standard error (a `SteadWarning` process warning),
 * to its owner (the one who can chmod it), never changed: a store shared with a group on purpose (one user runs the worker, a group reads
 * it with `stead ps`) must keep working, as it did. A key file as readable is refused instead
 * (STEAD_KEY_EXPOSED): a key opens every value of every copy of the store, for as long as the key
 * lives, while the store's own files are the copy at hand, and refusing them would stop every
 * worker of a store made by an older Stead at its upgrade. STEAD_ALLOW_READABLE_STORE=1 silences it.
 */
import { statSync } from "node:fs";

const warned = new Set<string>();

/** Warns when the store at `path`, or its -wal or -shm, may be read or written by its group or other users. */
export function warnIfExposed(path: string, env: NodeJS.ProcessEnv = process.env): void {
  if (process.platform === "win32" || env.STEAD_ALLOW_READABLE_STORE === "1" || warned.has(path)) return;
  // Told to whoever can act on it: the owner (a user the owner let read the store cannot chmod it).
  const uid = process.getuid?.();
  const files = [path, `${path}-wal`, `${path}-shm`].flatMap((f) => {
    const st = statSync(f, { throwIfNoEntry: false });
    return st && st.uid === uid && (st.mode & 0o066) !== 0 ? [{ f, mode: st.mode & 0o777 }] : [];
  });
  if (files.length === 0) return;
  warned.add(path);
  const others = files.some((x) => (x.mode & 0o006) !== 0);
  const modes = files.map((x) => `${x.f} (${x.mode.toString(8).padStart(4, "0")})`).join(", ");
  process.emitWarning(
    `stead: ${others ? "every user of this machine" : "the store's group"} may read or change the store's files: ${modes}, and with them every run in it. ` +
      `Make them the owner's alone: chmod 600 ${[path, `${path}-wal`, `${path}-shm`].join(" ")} (to share the store with a group on purpose, set STEAD_ALLOW_READABLE_STORE=1)`,
    { type: "SteadWarning" },
  );
}
