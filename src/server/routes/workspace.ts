/**
 * A run's workspace: its snapshots, the file tree and one file's bytes at a step, the diff of two
 * steps, and a snapshot as a tarball. The same calls of the control API as `stead snapshots`,
 * `stead diff` and the MCP workspace tools. A step is a step id, or `start` (as the run found its
 * workspace).
 */
import { z } from "zod";
import { fileResponse, tarballResponse } from "../file-response.js";
import { route } from "../route-table.js";
import { runId } from "../schemas.js";
import { tarballStream } from "../tarball.js";

const step = z.string().min(1).max(200);
const runStep = z.object({ runId: runId.shape.runId, step }).strict();
const fileQuery = z.object({ path: z.string().min(1).max(4096) }).strict();
const diffQuery = z.object({ from: step, to: step }).strict();

export const WORKSPACE = [
  route({
    method: "GET",
    path: "/runs/:runId/snapshots",
    summary: "A run's workspace path and its snapshots, oldest first",
    tag: "workspace",
    action: "workspace.read",
    params: runId,
    handle: ({ stead, params }) => stead.workspaces.snapshots(params.runId),
  }),
  route({
    method: "GET",
    path: "/runs/:runId/snapshots/:step/tree",
    summary: "The files and links of the workspace snapshot after a step (start: as the run found it), without their contents",
    tag: "workspace",
    action: "workspace.read",
    params: runStep,
    handle: ({ stead, params }) => stead.workspaces.files(params.runId, { step: params.step, content: false }),
  }),
  route({
    method: "GET",
    path: "/runs/:runId/snapshots/:step/file",
    summary: "One file's bytes in the workspace snapshot after a step: text/plain when UTF-8 text, else application/octet-stream as an attachment",
    tag: "workspace",
    action: "workspace.read",
    params: runStep,
    query: fileQuery,
    produces: "application/octet-stream",
    handle: async ({ stead, params, query }) => {
      const f = await stead.workspaces.file(params.runId, query.path, { step: params.step });
      return fileResponse(f.file.path, f.content);
    },
  }),
  route({
    method: "GET",
    path: "/runs/:runId/diff",
    summary: "Files added, changed and removed between the workspace snapshots of two steps",
    tag: "workspace",
    action: "workspace.read",
    params: runId,
    query: diffQuery,
    handle: ({ stead, params, query }) => stead.workspaces.diff(params.runId, query.from, query.to),
  }),
  route({
    method: "GET",
    path: "/runs/:runId/snapshots/:step/tarball",
    summary: "The workspace snapshot after a step as a gzipped tar (relative paths), streamed",
    tag: "workspace",
    action: "workspace.read",
    params: runStep,
    produces: "application/gzip",
    handle: async ({ stead, params, logError }) => {
      const snapshot = await stead.workspaces.entries(params.runId, { step: params.step });
      const body = tarballStream(snapshot, snapshot.snapshot.createdAt, (e) => logError(`tarball of run ${params.runId} at ${params.step} cut short: ${e instanceof Error ? e.message : "a non-error was thrown"}`));
      return tarballResponse(`${params.runId}-${params.step}.tar.gz`, body);
    },
  }),
];
