/**
 * docs/reference/http.md from the OpenAPI document the server serves (`openApiDocument(ROUTES)`,
 * itself made from the route table): each operation's method, path, summary, the least role that
 * may call it, its parameters, body and responses. Operations keep the table's order, grouped by tag.
 */
import { ACTIONS, type Action } from "../../src/engine/access/roles.js";

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  $ref?: string;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  description?: string;
}
interface Response {
  description?: string;
  content?: Record<string, unknown>;
}
interface Operation {
  summary?: string;
  tags?: string[];
  "x-stead-action"?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, Response>;
}
export interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const code = (v: unknown): string => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``;

/** A schema in a few words: `string`, `integer ≥ 1`, one of `a`, `b`, `array of string`. */
export function typeOf(s: Schema | undefined): string {
  if (!s) return "any";
  if (s.$ref) return s.$ref.split("/").at(-1) ?? s.$ref;
  if (s.enum) return `one of ${s.enum.map(code).join(", ")}`;
  if (s.const !== undefined) return code(s.const);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return alternatives.map(typeOf).join(" or ");
  const type = Array.isArray(s.type) ? s.type.join(" or ") : (s.type ?? "any");
  const bounds: string[] = [];
  if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) bounds.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) bounds.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) bounds.push(`length ≤ ${s.maxLength}`);
  if (s.pattern !== undefined) bounds.push(`matching ${code(s.pattern)}`);
  const base = type === "array" ? `array of ${typeOf(s.items)}` : type;
  return bounds.length ? `${base}, ${bounds.join(", ")}` : base;
}

const notes = (s: Schema | undefined, description?: string): string =>
  cell([description ?? s?.description, s?.default === undefined ? undefined : `default ${code(s.default)}`].filter(Boolean).join("; "));

function operation(method: string, path: string, op: Operation): string[] {
  const out = [`### ${method.toUpperCase()} ${path}`, "", cell(op.summary ?? ""), ""];
  const action = op["x-stead-action"];
  if (action) {
    const least = Object.hasOwn(ACTIONS, action) ? ACTIONS[action as Action].least : "unknown";
    out.push(`Permission: \`${action}\` (least role: ${least}).`, "");
  }
  const params = op.parameters ?? [];
  if (params.length) {
    out.push("| parameter | in | required | type | notes |", "| --- | --- | --- | --- | --- |");
    for (const p of params) out.push(`| \`${p.name}\` | ${p.in} | ${p.required ? "yes" : "no"} | ${cell(typeOf(p.schema))} | ${notes(p.schema, p.description)} |`);
    out.push("");
  }
  for (const [media, body] of Object.entries(op.requestBody?.content ?? {})) {
    const props = Object.entries(body.schema?.properties ?? {});
    out.push(`Body (\`${media}\`${op.requestBody?.required ? ", required" : ""}):`, "");
    if (props.length) {
      const required = new Set(body.schema?.required ?? []);
      out.push("| field | required | type | notes |", "| --- | --- | --- | --- |");
      for (const [name, s] of props) out.push(`| \`${name}\` | ${required.has(name) ? "yes" : "no"} | ${cell(typeOf(s))} | ${notes(s)} |`);
    } else out.push(`${cell(typeOf(body.schema))}.`);
    out.push("");
  }
  const responses = Object.entries(op.responses ?? {});
  if (responses.length) {
    out.push("| response | media type | meaning |", "| --- | --- | --- |");
    for (const [status, r] of responses) out.push(`| ${status} | ${Object.keys(r.content ?? {}).map(code).join(", ") || "—"} | ${cell(r.description ?? "")} |`);
    out.push("");
  }
  return out;
}

export function renderHttpReference(doc: OpenApi): string {
  const byTag = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? "other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...operation(method, path, op)]);
    }
  }
  return [
    "# HTTP API reference",
    "",
    "<!-- Generated from the OpenAPI document (src/server/openapi.ts over the route table, src/server/routes/)",
    "     by scripts/gen-reference.ts; test/docs.reference.test.ts checks it. Regenerate: npm run docs -->",
    "",
    "What `stead serve` answers under `/api/v1` (the document itself: `GET /api/v1/openapi.json`). How to",
    "use it — tokens, cookies, idempotency keys, streams — is in [the server guide](../guides/server-and-console.md).",
    "A refusal is an `application/problem+json` body whose `code` is in [errors.md](../errors.md), and changes nothing.",
    "Outside `/api/v1` the server also answers `GET /healthz`, `GET /readyz`, `GET /metrics`, MCP at `POST /mcp`",
    "([the MCP guide](../guides/mcp.md)) and the console at `/`.",
    "",
    `Groups: ${[...byTag.keys()].map((t) => `[${t}](#${t})`).join(", ")}.`,
    "",
    ...[...byTag].flatMap(([tag, lines]) => [`## ${tag}`, "", ...lines]),
  ].join("\n");
}
