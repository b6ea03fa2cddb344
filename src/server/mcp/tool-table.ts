/**
 * An MCP tool, declared once: its name, what it does, the action its caller's role must permit,
 * zod schemas of its arguments and its result, and its handler, one call of the control API. The
 * server lists it and checks both schemas from the same declaration, so the JSON Schemas a client
 * sees are the ones calls are held to.
 */
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Action } from "../../engine/access/roles.js";
import type { Stead } from "../../stead/stead.js";

/** Where the MCP server is reached: a local process's stdin and stdout, or `/mcp` on `stead serve`. */
export type McpTransportKind = "stdio" | "http";

export const TOOL_NAMES = [
  "list_runs",
  "get_run",
  "why",
  "run_events",
  "list_holds",
  "list_sessions",
  "session_transcript",
  "list_snapshots",
  "diff_snapshots",
  "restore_snapshot",
  "definitions",
  "start",
  "approve",
  "deny",
  "signal",
  "release",
  "pause",
  "resume",
  "cancel",
  "retry",
  "fork",
  "send",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolInput<A> {
  readonly stead: Stead;
  /** The arguments, parsed by the tool's input schema. */
  readonly args: A;
  /** Who calls: the token's name (HTTP) or the local user (stdio); recorded as `by` with every decision. */
  readonly by: string | null;
  /** Refuses an action, beyond the tool's own, that these arguments take and the caller may not. */
  readonly authorize: (action: Action) => void;
}

export interface Tool<A = unknown> {
  readonly name: ToolName;
  readonly title: string;
  /** For the model choosing a tool: what it does, when to use it, what it returns. */
  readonly description: string;
  /** What the caller's role must permit (engine/access/roles.ts). */
  readonly action: Action;
  /** An object schema (strict: an argument it does not name is refused). */
  readonly input: z.ZodObject;
  /** The result's shape, an object; the server checks every result against it before sending it. */
  readonly output: z.ZodObject;
  readonly annotations: ToolAnnotations;
  handle(input: ToolInput<A>): Promise<object>;
}

/** Keeps a tool's argument type while the table holds tools of many shapes. */
export const tool = <S extends z.ZodObject>(t: Omit<Tool<z.output<S>>, "input"> & { input: S }): Tool => t;

/** Annotations of a tool that only reads the store. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
