/**
 * index-report: a workflow doing real local work. It indexes a directory's source files (lines and
 * bytes per file, in chunks), writes a Markdown report, asks a person to approve publishing it,
 * waits a cool-down, then publishes a copy.
 *
 *   npx stead run examples/index-report.ts --input '{"dir": "src", "slowMs": 500}'
 *
 * Kill it at any point: `npx stead worker examples/index-report.ts` picks the run up at its last
 * completed step. Relative paths resolve against the directory of the process that runs the
 * first step (`list-files`), which journals them as absolute paths.
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { extname, join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { workflow } from "stead";

export interface IndexReportInput {
  /** The directory to index. */
  dir: string;
  /** Where the report and the published copy go. Default `.stead/index-report` under the worker's directory. */
  out?: string;
  /** A pause per chunk, in ms, so a demo can kill the run in the middle. Default 0. */
  slowMs?: number;
  /** Files per `count-<i>` step. Default 8. */
  chunkSize?: number;
}

interface FileStats {
  path: string;
  ext: string;
  lines: number;
  bytes: number;
}

interface Summary {
  files: number;
  lines: number;
  bytes: number;
  byExtension: Record<string, { files: number; lines: number; bytes: number }>;
  biggest: FileStats[];
}

const SKIP_DIRS = new Set(["node_modules", ".git", "dist", ".stead"]);
const SOURCE_EXTS = new Set([".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json", ".md", ".css", ".html", ".sql", ".sh", ".py", ".go", ".rs", ".yml", ".yaml"]);
/** The list of files is journaled: it must stay well under the 1 MiB payload ceiling. */
const MAX_FILES = 5000;

async function walk(root: string, dir: string, into: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) await walk(root, full, into);
    } else if (e.isFile() && SOURCE_EXTS.has(extname(e.name))) {
      into.push(relative(root, full));
      if (into.length > MAX_FILES) throw new Error(`${root} has more than ${MAX_FILES} source files; index a subdirectory instead`);
    }
  }
}

function summarize(stats: readonly FileStats[]): Summary {
  const byExtension: Summary["byExtension"] = {};
  for (const f of stats) {
    const e = (byExtension[f.ext || "(none)"] ??= { files: 0, lines: 0, bytes: 0 });
    e.files += 1;
    e.lines += f.lines;
    e.bytes += f.bytes;
  }
  return {
    files: stats.length,
    lines: stats.reduce((n, f) => n + f.lines, 0),
    bytes: stats.reduce((n, f) => n + f.bytes, 0),
    byExtension,
    biggest: [...stats].sort((a, b) => b.lines - a.lines || (a.path < b.path ? -1 : 1)).slice(0, 5),
  };
}

function markdown(root: string, s: Summary, key: string): string {
  const rows = Object.entries(s.byExtension)
    .sort(([, a], [, b]) => b.lines - a.lines)
    .map(([ext, e]) => `| ${ext} | ${e.files} | ${e.lines} | ${e.bytes} |`);
  return [
    `<!-- stead-idempotency-key: ${key} -->`,
    `# Index of ${root}`,
    "",
    `${s.files} files, ${s.lines} lines, ${s.bytes} bytes.`,
    "",
    "| extension | files | lines | bytes |",
    "| --- | ---: | ---: | ---: |",
    ...rows,
    "",
    "## Biggest files",
    "",
    ...s.biggest.map((f) => `- ${f.path}: ${f.lines} lines, ${f.bytes} bytes`),
    "",
  ].join("\n");
}

/** Writes through a temporary file and a rename: a reader (or a crash) never sees half a file. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, path);
}

export const indexReport = workflow("index-report", async (ctx, input: IndexReportInput) => {
  if (typeof input?.dir !== "string" || input.dir === "") {
    throw new Error(`index-report needs {"dir": "<directory>"} as input, got ${JSON.stringify(input)}`);
  }
  const slowMs = input.slowMs ?? 0;
  const chunkSize = Math.max(1, input.chunkSize ?? 8);

  const listing = await ctx.step("list-files", async () => {
    const root = resolve(input.dir);
    const files: string[] = [];
    await walk(root, root, files);
    return { root, out: resolve(input.out ?? ".stead/index-report"), files };
  });

  const stats: FileStats[] = [];
  for (let i = 0; i * chunkSize < listing.files.length; i++) {
    const chunk = listing.files.slice(i * chunkSize, (i + 1) * chunkSize);
    const counted = await ctx.step(`count-${i}`, async () => {
      const out: FileStats[] = [];
      for (const path of chunk) {
        const buf = await readFile(join(listing.root, path));
        const text = buf.toString("utf8");
        const lines = text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
        out.push({ path, ext: extname(path), lines, bytes: buf.length });
      }
      if (slowMs > 0) await sleep(slowMs);
      return out;
    });
    stats.push(...counted);
  }

  const summary = await ctx.step("summarize", () => summarize(stats));
  const reportPath = join(listing.out, "index-report.md");

  // An effect: if the process dies after the write but before the step's outcome is committed,
  // `reconcile` looks for the report carrying this step's idempotency key instead of guessing.
  const report = await ctx.step<{ path: string; bytes: number }>(
    "write-report",
    {
      effect: true,
      reconcile: async ({ idempotencyKey }) => {
        if (!existsSync(reportPath)) return { status: "not-done" };
        const text = await readFile(reportPath, "utf8");
        return text.startsWith(`<!-- stead-idempotency-key: ${idempotencyKey} -->`)
          ? { status: "done", result: { path: reportPath, bytes: Buffer.byteLength(text) } }
          : { status: "not-done" };
      },
    },
    async () => {
      const text = markdown(listing.root, summary, ctx.idempotencyKey);
      await mkdir(listing.out, { recursive: true });
      await writeAtomically(reportPath, text);
      return { path: reportPath, bytes: Buffer.byteLength(text) };
    },
  );

  // Approvals, sleeps and steps share one namespace of ids in a run: the step is "publish-report".
  const decision = await ctx.approval("publish", {
    summary: { report: report.path, files: summary.files, lines: summary.lines, bytes: summary.bytes },
  });
  let published: string | null = null;
  if (decision.approved) {
    await ctx.sleep("cool-down", "2s");
    // Copying the same report again is harmless, so a crash mid-copy may simply retry.
    published = await ctx.step("publish-report", { effect: true, retry: "always" }, async () => {
      const target = join(listing.out, "published.md");
      const tmp = `${target}.${process.pid}.tmp`;
      await copyFile(report.path, tmp);
      await rename(tmp, target);
      return target;
    });
  }

  return {
    dir: listing.root,
    files: summary.files,
    lines: summary.lines,
    bytes: summary.bytes,
    biggest: summary.biggest[0]?.path ?? null,
    report: report.path,
    published,
    decidedBy: decision.by,
  };
});
