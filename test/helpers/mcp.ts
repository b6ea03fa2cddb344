/**
 * For the MCP tests: the SDK's own client's results read plainly, and a malformed-arguments sweep
 * generated from each tool's listed input schema (wrong types, values out of range, unknown
 * arguments, required ones missing), so a tool added later is swept without writing its cases.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: { type: "object"; properties?: Record<string, object> | undefined; required?: string[] | undefined };
  outputSchema?: { type: "object"; properties?: Record<string, object> | undefined } | undefined;
  annotations?: Record<string, unknown> | undefined;
}

export interface CallResult {
  isError: boolean;
  text: string;
  structured: Record<string, unknown> | undefined;
}

export async function call(client: Client, name: string, args: unknown): Promise<CallResult> {
  const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
  const content = (r.content ?? []) as { type: string; text?: string }[];
  return { isError: r.isError === true, text: content.map((c) => c.text ?? "").join("\n"), structured: r.structuredContent as Record<string, unknown> | undefined };
}

/** A result's structured content, or a failure naming what the tool said instead. */
export async function ok<T = Record<string, unknown>>(client: Client, name: string, args: unknown): Promise<T> {
  const r = await call(client, name, args);
  if (r.isError || r.structured === undefined) throw new Error(`${name} refused: ${r.text}`);
  return r.structured as T;
}

/** The refusal of a call that must be refused: its code (structured), and its text. */
export async function refused(client: Client, name: string, args: unknown): Promise<{ code: string | undefined; text: string; error: Record<string, unknown> | undefined }> {
  const r = await call(client, name, args);
  if (!r.isError) throw new Error(`${name} was not refused: ${r.text.slice(0, 300)}`);
  const error = r.structured?.error as Record<string, unknown> | undefined;
  return { code: error?.code as string | undefined, text: r.text, error };
}

type Prop = { type?: string | string[]; enum?: unknown[]; maxLength?: number; minimum?: number; items?: object; anyOf?: Prop[] };

/** Values of the wrong kind for a property's schema (none for an argument that takes any JSON). */
function wrongValues(p: Prop): unknown[] {
  const types = p.anyOf ? p.anyOf.flatMap((a) => (Array.isArray(a.type) ? a.type : a.type ? [a.type] : [])) : Array.isArray(p.type) ? p.type : p.type ? [p.type] : [];
  if (types.length === 0 && !p.enum) return [];
  const out: unknown[] = [];
  if (!types.includes("string")) out.push("not-this");
  if (!types.includes("number") && !types.includes("integer")) out.push(42);
  if (!types.includes("boolean")) out.push(true);
  if (!types.includes("object")) out.push({ nested: 1 });
  if (p.enum) out.push("no-such-choice");
  if (p.maxLength !== undefined) out.push("x".repeat(p.maxLength + 1));
  if (p.minimum !== undefined) out.push(p.minimum - 1);
  if (types.includes("integer")) out.push(1.5);
  return out;
}

/** Arguments each of which the tool must refuse, derived from `valid` and the listed schema. */
export function malformedArguments(tool: ListedTool, valid: Record<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [["an argument it does not take", { ...valid, surprise: true }]];
  for (const [k, p] of Object.entries(tool.inputSchema.properties ?? {})) {
    for (const bad of wrongValues(p)) out.push([`${k} = ${JSON.stringify(bad).slice(0, 40)}`, { ...valid, [k]: bad }]);
  }
  for (const k of tool.inputSchema.required ?? []) {
    if (!(k in valid)) continue;
    const rest = { ...valid };
    delete rest[k];
    out.push([`${k} missing`, rest]);
  }
  return out;
}
