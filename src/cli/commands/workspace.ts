import type { Command } from "commander";
import { retentionAge } from "../../engine/runs/retention.js";
import { formatBytes } from "../../engine/byte-sizes.js";
import { formatDuration } from "../../engine/durations.js";
import { SteadError } from "../../errors.js";
import { noteLabel, type StoredNotes } from "../../workspace/notes.js";
import { DEFAULT_GC_GRACE_MS } from "../../workspace/options.js";
import { act, example, print, printJson, withStead } from "../context.js";
import { writeErr } from "../report-error.js";
import { DEFAULT_ERASE_WAIT_MS } from "../../stead/stead.js";
import type { EraseReport } from "../../store/types.js";
import { age, table } from "../format.js";

/** Whether the deleted rows' bytes are gone from an SQLite store's files, on standard output. */
function printErase(erase: EraseReport | undefined): void {
  if (!erase) return;
  print(erase.erased ? "erased: no deleted row's bytes are left in the store file or its -wal" : "not yet erased: see the warning on standard error");
}

/**
 * An erase a reader kept from finishing, on standard error (with --json too): which files still
 * hold the deleted rows' bytes, why, and how it finishes. Never silent: a gc is run to get rid of them.
 */
function eraseWarning(erase: EraseReport | undefined): void {
  if (!erase || erase.erased || !erase.pending) return;
  const files = erase.pending.files.map((f) => `${f.path} (${formatBytes(f.bytes)})`).join(" and ");
  writeErr(
    `stead: warning: the deleted rows' bytes are still in ${files}: ${erase.pending.reason}. A worker with this store open erases them once that reader is done; or run \`stead gc\` again then (\`--erase-wait\` waits longer).`,
  );
}

/** Note lines printed at most; the rest are counted (`--json` has them all). */
const MAX_NOTE_LINES = 20;

/**
 * The files snapshots have no content for (skipped, gaps), one line per path and note, with the
 * snapshots (seqs) it applies to when `seq` is given: a file skipped in every snapshot is one line.
 */
function noteLines(snapshots: readonly { seq?: number; notes: StoredNotes }[]): string[] {
  const byLine = new Map<string, number[]>();
  let beyond = 0;
  for (const s of snapshots) {
    for (const n of s.notes.notes) {
      const line = `${n.path}: ${noteLabel(n)}`;
      byLine.set(line, [...(byLine.get(line) ?? []), ...(s.seq === undefined ? [] : [s.seq])]);
    }
    beyond += Object.values(s.notes.more ?? {}).reduce((a, b) => a + (b ?? 0), 0);
  }
  const all = [...byLine].map(([line, seqs]) => `  ${line}${seqs.length ? ` — seq ${seqs.join(", ")}` : ""}`);
  const out = all.slice(0, MAX_NOTE_LINES);
  const more = all.length - out.length;
  if (more > 0) out.push(`  … and ${more} more (--json lists them)`);
  if (beyond > 0) out.push(`  … and ${beyond} more the store counted but did not list`);
  return out;
}

/** A whole number of at least `min` (`--seq` may be -1: the start snapshot). */
function parseInt(text: string, what: string, min: number): number {
  const n = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min) {
    throw new SteadError("STEAD_BAD_OPTION", `${what} must be a whole number of at least ${min}, not ${JSON.stringify(text)}`, { fix: `for example ${what} ${Math.max(min, 3)}` });
  }
  return n;
}

export function registerWorkspace(program: Command): void {
  const snapshots = program
    .command("snapshots")
    .description("a run's workspace snapshots: journal position, step, source (start, step, settle), files changed, age")
    .argument("<run>", "run id")
    .option("--json", "print JSON")
    .action(
      act(async (runId: string, o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const run = await stead.workspaces.snapshots(runId);
          const list = run.snapshots;
          if (o.json) return printJson(list);
          if (list.length === 0) {
            return print(`run ${runId} has no workspace snapshots${run.workspace ? "" : " (it was started without a workspace)"}`);
          }
          if (run.workspace) print(`workspace ${run.workspace}`);
          print(
            table(
              ["SEQ", "STEP", "SOURCE", "CHANGED", "FILES", "SIZE", "NOTES", "AGE"],
              list.map((s) => {
                const notes = s.notes;
                const gaps = notes.notes.filter((n) => n.kind === "gap").length + (notes.more?.gap ?? 0);
                const skipped = notes.notes.length - notes.notes.filter((n) => n.kind === "gap").length + (notes.more?.["too-large"] ?? 0) + (notes.more?.unsupported ?? 0) + (notes.more?.secret ?? 0);
                const label = [gaps ? `${gaps} gap${gaps > 1 ? "s" : ""}` : "", skipped ? `${skipped} skipped` : ""].filter(Boolean).join(", ") || "-";
                return [String(s.seq), s.stepId ?? "-", s.source, String(s.filesChanged), String(s.files), formatBytes(s.bytes), label, age(s.createdAt)];
              }),
            ),
          );
          const notes = noteLines(list);
          if (notes.length > 0) {
            print("files a snapshot has no content for:");
            for (const l of notes) print(l);
          }
        });
      }),
    );
  example(snapshots, "stead snapshots 01J9Z6K8M2", "stead snapshots 01J9Z6K8M2 --json");

  const restore = program
    .command("restore")
    .description("write a run's workspace as it was after a step into an empty or new directory (default: the run's own workspace path)")
    .argument("<run>", "run id")
    .option("--step <id>", "the snapshot of this step (default: the run's latest step snapshot)")
    .option("--seq <n>", "the snapshot at this journal position (-1: as the run found its workspace)")
    .option("--to <dir>", "the directory to write (must be missing or empty)")
    .option("--keep-special-bits", "write setuid and setgid bits as the snapshot records them (default: cleared)")
    .action(
      act(async (runId: string, o: { step?: string; seq?: string; to?: string; keepSpecialBits?: boolean }, cmd: Command) => {
        if (o.step !== undefined && o.seq !== undefined) {
          throw new SteadError("STEAD_BAD_OPTION", "--step and --seq both name a snapshot", { fix: "pass one of them" });
        }
        const seq = o.seq === undefined ? undefined : parseInt(o.seq, "--seq", -1);
        await withStead(cmd, "read", async (stead) => {
          const r = await stead.workspaces.restore(runId, { ...(o.step !== undefined ? { step: o.step } : {}), ...(seq !== undefined ? { seq } : {}), ...(o.to !== undefined ? { to: o.to } : {}), ...(o.keepSpecialBits ? { keepSpecialBits: true } : {}) });
          const snapshot = r.snapshot;
          print(`restored run ${runId} ${snapshot.stepId ? `after step "${snapshot.stepId}"` : "as it started"} (seq ${snapshot.seq}, ${snapshot.source}) into ${r.target}: ${r.files} files`);
          const notes = noteLines([{ notes: snapshot.notes }]);
          if (notes.length > 0) {
            print("not restored (the snapshot has no content for them):");
            for (const l of notes) print(l);
          }
        });
      }),
    );
  example(restore, "stead restore 01J9Z6K8M2 --to ./recovered", "stead restore 01J9Z6K8M2 --step edit-readme --to /tmp/before");

  const diff = program
    .command("diff")
    .description("files added (A), changed (M) and removed (D) between the workspace snapshots of two steps")
    .argument("<run>", "run id")
    .argument("<stepA>", "the earlier step (start: as the run found its workspace)")
    .argument("<stepB>", "the later step")
    .option("--json", "print JSON")
    .action(
      act(async (runId: string, stepA: string, stepB: string, o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const d = await stead.workspaces.diff(runId, stepA, stepB);
          if (o.json) return printJson(d);
          for (const p of d.added) print(`A ${p}`);
          for (const p of d.changed) print(`M ${p}`);
          for (const p of d.removed) print(`D ${p}`);
          print(`${d.added.length} added, ${d.changed.length} changed, ${d.removed.length} removed`);
        });
      }),
    );
  example(diff, "stead diff 01J9Z6K8M2 start fix-tests");

  const gc = program
    .command("gc")
    .description("delete workspace blobs no snapshot refers to; with --keep-steps, first prune finished runs' older snapshots; with --finished-before, first delete runs finished that long ago")
    .option("--finished-before <duration>", "delete runs finished at least this long ago (e.g. 30d): journals, events, waits, holds, snapshots; a whole run tree and session at a time, never one not finished")
    .option("--keep-summary", "with --finished-before: keep each run's row (status, input, output, error) and a run.pruned event")
    .option("--keep-steps <n>", "keep each finished run's last N step snapshots (default: keep every snapshot)")
    .option("--grace <seconds>", "spare unreferenced blobs written this recently (captures in flight)", String(DEFAULT_GC_GRACE_MS / 1000))
    .option("--erase-wait <seconds>", "SQLite: how long to wait for another connection's read to end so that the deleted rows' bytes can be erased from the store file and its -wal", String(DEFAULT_ERASE_WAIT_MS / 1000))
    .option("--json", "print JSON")
    .action(
      act(async (o: { keepSteps?: string; grace: string; eraseWait: string; json?: boolean; finishedBefore?: string; keepSummary?: boolean }, cmd: Command) => {
        const keepSteps = o.keepSteps === undefined ? undefined : parseInt(o.keepSteps, "--keep-steps", 0);
        const graceMs = parseInt(o.grace, "--grace", 0) * 1000;
        const eraseWaitMs = parseInt(o.eraseWait, "--erase-wait", 0) * 1000;
        if (o.keepSummary && o.finishedBefore === undefined) {
          throw new SteadError("STEAD_BAD_OPTION", "--keep-summary goes with --finished-before", { fix: "stead gc --finished-before 30d --keep-summary" });
        }
        const finishedBefore = o.finishedBefore === undefined ? undefined : retentionAge(o.finishedBefore, "--finished-before");
        await withStead(cmd, false, async (stead) => {
          if (finishedBefore !== undefined) {
            const r = await stead.runs.deleteFinished({ finishedBefore, keepSummary: o.keepSummary ?? false, graceMs, eraseWaitMs });
            eraseWarning(r.erase);
            if (o.json) return printJson(r);
            print(`${o.keepSummary ? "reduced to a summary" : "deleted"} ${r.runs} finished run(s) older than ${formatDuration(finishedBefore)}; freed ${r.blobsDeleted} blobs (${formatBytes(r.bytesFreed)})`);
            if (r.keptCount) print(`kept ${r.keptCount} run tree(s) or session(s) with a run not finished or finished since${r.kept.length ? `, e.g. ${r.kept.slice(0, 3).map((k) => `${k.root} (${k.reason})`).join(", ")}` : ""}`);
            printErase(r.erase);
            return;
          }
          const r = await stead.admin.gc({ ...(keepSteps !== undefined ? { keepSteps } : {}), graceMs, eraseWaitMs });
          eraseWarning(r.erase);
          if (o.json) return printJson(r);
          print(`deleted ${r.snapshotsDeleted} snapshots and ${r.blobsDeleted} blobs (${formatBytes(r.bytesFreed)}); ${r.blobsReferenced} blobs still referenced`);
          if (r.brokenSnapshots) print(`warning: ${r.brokenSnapshots} snapshot(s) refer to missing trees and cannot be restored`);
          printErase(r.erase);
        });
      }),
    );
  example(gc, "stead gc", "stead gc --keep-steps 5", "stead gc --finished-before 30d --keep-summary");
}
