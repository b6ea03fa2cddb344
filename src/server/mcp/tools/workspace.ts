/**
 * A run's workspace: its snapshots, the diff of two steps, and a snapshot's files. Over HTTP,
 * `restore_snapshot` returns the files (and contents) and writes nothing on the server's disk;
 * over stdio (a process on the caller's own machine) it may also write them into a directory the
 * caller names, which must be missing or empty.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { SteadError } from "../../../errors.js";
import { MAX_READ_BYTES } from "../../../workspace/index.js";
import { snapshotFile, snapshotView } from "../outputs.js";
import { READ_ONLY, tool, type McpTransportKind, type Tool } from "../tool-table.js";
import { runArg } from "./reads.js";

const stepArg = z.string().min(1).max(200);

const which = {
  step: stepArg.optional().describe("the snapshot after this step (start: as the run found its workspace); default: the latest step's"),
  seq: z.number().int().min(-1).optional().describe("the snapshot at this journal position (-1: the start snapshot)"),
};

const restoreOutput = z.looseObject({
  runId: z.string(),
  snapshot: snapshotView,
  files: z.array(snapshotFile).describe("the snapshot's files in path order (with `content` unless asked not to, or over the byte budget)"),
  omitted: z.number().int().describe("files listed without their content because it would pass maxBytes"),
  target: z.string().nullable().describe("the directory written (stdio with `to` only); null: nothing was written"),
});

function restoreTool(transport: McpTransportKind): Tool {
  const local = transport === "stdio";
  return tool({
    name: "restore_snapshot",
    title: "Restore a workspace snapshot",
    description: local
      ? "A run's workspace as it was after a step (as `stead restore`): with `to`, written into that directory (an absolute path, missing or empty); without, returned as files and their contents (UTF-8 text, else base64), within maxBytes."
      : "A run's workspace as it was after a step, returned as files and their contents (UTF-8 text, else base64) within maxBytes; nothing is written on the server. `paths` narrows it to files or directories.",
    action: "workspace.read",
    input: z
      .object({
        runId: runArg,
        ...which,
        paths: z.array(z.string().min(1).max(4096)).min(1).max(1000).optional().describe('only these files or directories, relative to the workspace root ("src/main.ts", "src")'),
        content: z.boolean().optional().describe("false: list the files without their contents (default true)"),
        maxBytes: z.number().int().min(0).max(MAX_READ_BYTES).optional().describe("budget for the contents in bytes (default 1 MiB)"),
        ...(local ? { to: z.string().min(1).max(4096).refine(isAbsolute, "must be an absolute path").optional().describe("write the files into this directory (absolute; missing or empty)") } : {}),
      })
      .strict(),
    output: restoreOutput,
    annotations: local ? { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } : READ_ONLY,
    handle: async ({ stead, args, authorize }) => {
      const choice = { ...(args.step !== undefined ? { step: args.step } : {}), ...(args.seq !== undefined ? { seq: args.seq } : {}) };
      const to = (args as { to?: string }).to;
      // Writing files is no read: `stead mcp --read-only` (a viewer) refuses `to`.
      if (to !== undefined) authorize("workspace.restore");
      const read = { ...choice, ...(args.paths ? { paths: args.paths } : {}), ...(args.maxBytes !== undefined ? { maxBytes: args.maxBytes } : {}) };
      if (to === undefined) return { ...(await stead.workspaces.files(args.runId, { ...read, ...(args.content !== undefined ? { content: args.content } : {}) })), target: null };
      if (args.paths !== undefined || args.content !== undefined || args.maxBytes !== undefined) {
        throw new SteadError("STEAD_BAD_OPTION", "`to` writes the whole snapshot: paths, content and maxBytes only shape a returned one", { fix: "pass `to` alone, or leave it out to get the files back", field: "to" });
      }
      const r = await stead.workspaces.restore(args.runId, { ...choice, to });
      const listed = await stead.workspaces.files(args.runId, { seq: r.snapshot.seq, content: false });
      return { ...listed, snapshot: r.snapshot, target: r.target };
    },
  });
}

export const workspaceTools = (transport: McpTransportKind): Tool[] => [
  tool({
    name: "list_snapshots",
    title: "A run's workspace snapshots",
    description: "A run's workspace path and its snapshots, oldest first: journal position, step, source (start, step, settle), files, bytes, files changed, and files it has no content for (as `stead snapshots`).",
    action: "workspace.read",
    input: z.object({ runId: runArg }).strict(),
    output: z.looseObject({ runId: z.string(), workspace: z.string().nullable(), snapshots: z.array(snapshotView) }),
    annotations: READ_ONLY,
    handle: ({ stead, args }) => stead.workspaces.snapshots(args.runId),
  }),
  tool({
    name: "diff_snapshots",
    title: "Diff two steps' workspaces",
    description: "Files added, changed and removed between the workspace snapshots of two steps of a run (`start`: as the run found its workspace) (as `stead diff`).",
    action: "workspace.read",
    input: z.object({ runId: runArg, from: stepArg.describe("the earlier step (start: as the run found it)"), to: stepArg.describe("the later step") }).strict(),
    output: z.looseObject({ added: z.array(z.string()), changed: z.array(z.string()), removed: z.array(z.string()) }),
    annotations: READ_ONLY,
    handle: ({ stead, args }) => stead.workspaces.diff(args.runId, args.from, args.to),
  }),
  restoreTool(transport),
];
