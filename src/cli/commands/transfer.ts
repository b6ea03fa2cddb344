import { createReadStream, createWriteStream, existsSync, statSync, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Command } from "commander";
import { SteadError } from "../../errors.js";
import type { Stead } from "../../stead/stead.js";
import type { ExportSummary, StoreDigest } from "../../stead/transfer.js";
import { TRANSFER_TABLES } from "../../store/types.js";
import { act, example, print, printJson, storeOption, withStead } from "../context.js";
import { newStore, type NewStore } from "../../stead/new-store.js";
import { writeErr } from "../report-error.js";
import { onInterrupt } from "../follow.js";
import { printable } from "../format.js";
import { EXIT } from "../exit-codes.js";

const PG_EXAMPLE = "postgres://stead:secret@db.internal:5432/stead";

const counts = (tables: StoreDigest) => TRANSFER_TABLES.map((t) => `${t} ${tables[t].rows}`).join(", ");

export function registerTransfer(program: Command): void {
  const migrate = program
    .command("migrate")
    .description("create the store if missing and apply pending schema migrations; prints its schema version")
    .action(
      act(async (_o: unknown, cmd: Command) => {
        await withStead(cmd, true, async (stead) => {
          const info = await stead.admin.storeInfo();
          print(`store ${info.location} (${info.dialect}) is at schema version ${info.schemaVersion}`);
        });
      }),
    );
  example(migrate, `stead migrate --store ${PG_EXAMPLE}`, `STEAD_DATABASE_URL=${PG_EXAMPLE} stead migrate`);

  const exp = program
    .command("export")
    .description("write every run, journal entry, wait, hold, event, workspace snapshot, blob and token (hashed) of the store as a dump (JSON lines, with row counts and digests)")
    .option("--out <file>", "write the dump to this file (default: standard output)")
    .action(
      act(async (o: { out?: string }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          if (o.out === undefined || o.out === "-") {
            const s = await stead.admin.exportDump(process.stdout);
            // Standard output carries the dump: the summary goes to standard error.
            writeErr(`exported ${stead.location} (${s.source}, schema ${s.schema}): ${counts(s.tables)}`);
            return;
          }
          const s = await exportToFile(stead, o.out);
          print(`exported ${stead.location} (${s.source}, schema ${s.schema}) to ${o.out}: ${counts(s.tables)}`);
        });
      }),
    );
  example(exp, "stead export --store .stead/stead.db --out stead.dump", `stead export --store .stead/stead.db | stead import - --store ${PG_EXAMPLE}`);

  const imp = program
    .command("import")
    .description("load a dump written by `stead export` into an empty store (created if missing), then verify every table against it")
    .argument("<file>", "the dump file, or - for standard input")
    .option("--with-tokens", "import the dump's access tokens too (default: left out; a plain dump's digests do not show an edit, such as a planted token)")
    .option("--json", "print the summary as one JSON object")
    .action(
      act(async (file: string, o: { withTokens?: boolean; json?: boolean }, cmd: Command) => {
        const stdin = file === "-";
        if (!stdin && (!existsSync(file) || !statSync(file).isFile())) {
          throw new SteadError("STEAD_BAD_PATH", `no dump file at ${file}`, { fix: "pass the file `stead export --out <file>` wrote, or - to read standard input" });
        }
        // The whole dump is checked (an encrypted one's signature with its key) before the target
        // store is opened: a bad dump, or one whose key is missing, creates nothing.
        const { readDump, removePrivateTempDirsSync } = await import("../../stead/transfer.js");
        const target = newStore(storeOption(cmd));
        const uninterruptible = endOnInterrupt(target, removePrivateTempDirsSync, "imported");
        let dump: Awaited<ReturnType<typeof readDump>>;
        try {
          dump = await readDump(stdin ? process.stdin : () => createReadStream(file), stdin ? "standard input" : file);
        } catch (e) {
          uninterruptible();
          throw e;
        }
        try {
          await withStead(cmd, true, async (stead) => {
            const r = await stead.admin.importDump(dump, { withTokens: o.withTokens ?? false });
            if (o.json) return printJson(r);
            // The header's source is the dump's text, whoever wrote it: shown, never sent to the terminal as control codes.
            print(`imported ${printable(dump.name)} (from ${printable(r.source)}, schema ${r.schema}) into ${printable(r.location)} (${r.dialect}):`);
            const width = Math.max(...TRANSFER_TABLES.map((t) => t.length));
            for (const t of TRANSFER_TABLES) print(`  ${t.padEnd(width)}  ${r.tables[t].rows}`);
            for (const line of verifiedLines(r, "dump")) print(line);
          });
        } catch (e) {
          target.discard();
          throw e;
        } finally {
          uninterruptible();
          await dump.dispose();
        }
      }),
    );
  example(imp, `stead import stead.dump --store ${PG_EXAMPLE}`, "stead import stead.dump --store ./moved/stead.db", "stead import stead.dump --with-tokens --store ./moved/stead.db");
}

/**
 * Until the returned function is called, the first SIGINT or SIGTERM ends an import or a restore at
 * once (exit 130), removing what it made: its private temp copies (a spooled dump, a backup's
 * copy) and the new SQLite store it was writing. Left to the default, a signal ends the process
 * with no `finally` run, and the copy of a whole store stays in the temp directory.
 */
export function endOnInterrupt(target: NewStore, removeTemps: () => void, done: "imported" | "restored"): () => void {
  return onInterrupt((signal) => {
    removeTemps();
    target.discard();
    writeErr(`stead: ${signal}: stopped, ${target.removable ? `nothing ${done} (the new store was removed)` : "the target store may hold part of the rows: empty it (a Postgres database: drop and re-create it) before trying again"}`);
    process.exit(EXIT.interrupted);
  });
}

/** What an import or a restore verified, and the tokens it left out. */
export function verifiedLines(r: { signed: boolean; tokensSkipped: number }, what: "dump" | "backup"): string[] {
  const out = [`verified: every table's row count and SHA-256 digest in the store match the ${what}`];
  out.push(
    r.signed
      ? `verified: the ${what}'s signature, made with its store's key: it is as its store wrote it`
      : `the ${what} is of a plain store and not signed: its digests detect damage, not edits`,
  );
  if (r.tokensSkipped > 0) out.push(`${r.tokensSkipped} token${r.tokensSkipped === 1 ? "" : "s"} not imported (pass --with-tokens to import them)`);
  return out;
}

/** Writes to a temp file beside `out` and renames it into place at the end: a failed export leaves no partial file under that name. */
async function exportToFile(stead: Stead, out: string): Promise<ExportSummary> {
  const tmp = join(dirname(out), `.${basename(out)}.${process.pid}.partial`);
  let stream: WriteStream;
  try {
    // Readable by its owner alone: a dump holds every run (a plain store's in the clear).
    stream = createWriteStream(tmp, { flags: "wx", mode: 0o600 });
    await new Promise<void>((resolve, reject) => stream.once("open", () => resolve()).once("error", reject));
  } catch (e) {
    throw new SteadError("STEAD_BAD_PATH", `cannot write ${out} (${e instanceof Error ? e.message : String(e)})`, { fix: "choose a path in a directory you can write to" });
  }
  try {
    const summary = await stead.admin.exportDump(stream);
    await new Promise<void>((resolve, reject) => {
      stream.once("error", reject);
      stream.end(() => resolve());
    });
    await rename(tmp, out);
    return summary;
  } catch (e) {
    stream.destroy();
    await rm(tmp, { force: true });
    throw e;
  }
}
