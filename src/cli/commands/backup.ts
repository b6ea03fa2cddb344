import type { Command } from "commander";
import { SteadError } from "../../errors.js";
import { TRANSFER_TABLES } from "../../store/types.js";
import type { StoreDigest } from "../../stead/transfer.js";
import { act, example, print, printJson, storeOption, withStead } from "../context.js";
import { newStore } from "../../stead/new-store.js";
import { endOnInterrupt, verifiedLines } from "./transfer.js";
import { printable } from "../format.js";

const counts = (tables: StoreDigest) => TRANSFER_TABLES.map((t) => `${t} ${tables[t].rows}`).join(", ");

export function registerBackup(program: Command): void {
  const backup = program
    .command("backup")
    .description("take an online, checked copy of an SQLite store into a new file while workers keep writing (--to), or load one into an empty store (--restore)")
    .option("--to <file>", "write the backup to this new file (never overwritten)")
    .option("--restore <file>", "check the backup, then load it into the store named by --store, which must hold no rows")
    .option("--with-tokens", "with --restore: load the backup's access tokens too (default: left out)")
    .option("--json", "print the summary as one JSON object")
    .action(
      act(async (o: { to?: string; restore?: string; withTokens?: boolean; json?: boolean }, cmd: Command) => {
        if ((o.to === undefined) === (o.restore === undefined)) {
          throw new SteadError("STEAD_BAD_OPTION", o.to === undefined ? "stead backup needs --to <file> or --restore <file>" : "--to and --restore do not go together", {
            fix: "take a backup with `stead backup --to <file>`, or restore one with `stead backup --restore <file> --store <new store>`",
          });
        }
        if (o.to !== undefined) {
          const to = o.to;
          // A read-only connection is enough: the copy is written by SQLite into the new file.
          await withStead(cmd, "read", async (stead) => {
            const started = Date.now();
            const s = await stead.admin.backup(to);
            if (o.json) return printJson({ ...s, tookMs: Date.now() - started });
            print(`backed up ${s.source} (schema ${s.schemaVersion}) to ${s.file}: ${s.bytes} bytes in ${Date.now() - started} ms`);
            print(`  ${counts(s.tables)}`);
            print("verified: SQLite's integrity check passed on the copy; its row counts and SHA-256 digests are recorded in it");
          });
          return;
        }
        // The whole backup is checked before the target store is opened: a bad one creates nothing.
        // Loaded here: only a restore needs the backup reader (start-up of every command would pay for it).
        const { openBackup, removePrivateTempDirsSync } = await import("../../stead/transfer.js");
        const target = newStore(storeOption(cmd));
        const uninterruptible = endOnInterrupt(target, removePrivateTempDirsSync, "restored");
        let checked: Awaited<ReturnType<typeof openBackup>>;
        try {
          checked = await openBackup(o.restore as string);
        } catch (e) {
          uninterruptible();
          throw e;
        }
        try {
          await withStead(cmd, true, async (stead) => {
            const r = await stead.admin.restoreBackup(checked, { withTokens: o.withTokens ?? false });
            if (o.json) return printJson(r);
            // The record is the backup's text, whoever wrote it: shown, never sent to the terminal as control codes.
            print(`restored ${printable(checked.file)} (taken ${new Date(r.backup.takenAt).toISOString()} from ${printable(r.backup.source)}) into ${printable(r.location)} (${r.dialect}):`);
            print(`  ${counts(r.tables)}`);
            for (const line of verifiedLines(r, "backup")) print(line);
          });
        } catch (e) {
          target.discard();
          throw e;
        } finally {
          uninterruptible();
          await checked.close();
        }
      }),
    );
  example(backup, "stead backup --to /backups/stead-$(date +%F).db", "stead backup --restore /backups/stead-2026-12-01.db --store ./restored/stead.db", "stead worker --store /backups/stead-2026-12-01.db   # or open a backup where it lies");
}
