/**
 * The OpenAPI 3.1 document of the API, from the route table: each route's params, query and body
 * are its zod schemas as JSON Schema (zod's own conversion), and every refusal is a problem
 * response (RFC 9457) whose `code` docs/errors.md lists.
 */
import { z } from "zod";
import type { Route } from "./route-table.js";

const PROBLEM = {
  type: "object",
  required: ["type", "title", "status", "detail", "code"],
  properties: {
    type: { type: "string" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string", description: "Stead's error code (docs/errors.md)" },
    fix: { type: "string" },
    runId: { type: "string" },
    field: { type: "string", description: "the request field a 400 names" },
  },
};

const schemaOf = (s: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
};

function parameters(r: Route): unknown[] {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ["path", r.params],
    ["query", r.query],
  ] as const) {
    if (!schema) continue;
    const json = schemaOf(schema) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, s] of Object.entries(json.properties ?? {})) out.push({ name, in: where, required: where === "path" || (json.required ?? []).includes(name), schema: s });
  }
  if (r.kind === "stream") out.push({ name: "Last-Event-ID", in: "header", required: false, schema: { type: "string", minLength: 1, maxLength: 32_768 }, description: "resume after this event (an SSE id; `0`: from the first event); wins over `after`" });
  if (r.idempotent) out.push({ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", minLength: 1, maxLength: 200 }, description: "a retry with the same key returns the first result and changes nothing" });
  return out;
}

export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = `/api/v1${r.path.replace(/:([A-Za-z]+)/g, "{$1}")}`;
    const problem = { description: "refused (nothing changed)", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } };
    paths[path] ??= {};
    (paths[path])[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      "x-stead-action": r.action,
      parameters: parameters(r),
      ...(r.body ? { requestBody: { required: false, content: { "application/json": { schema: schemaOf(r.body) } } } } : {}),
      responses: {
        "200":
          r.kind === "stream"
            ? { description: "an SSE stream: each message's `id:` is the position after its event, its `data:` the event as JSON; `:` lines are heartbeats; a run's stream ends with an `end` message after the run's final event", content: { "text/event-stream": { schema: { type: "string" } } } }
            : { description: "done", content: r.produces ? { [r.produces]: { schema: { type: "string", contentMediaType: r.produces } } } : { "application/json": { schema: { type: "object" } } } },
        ...(r.kind === "stream" ? { "204": { description: "nothing to stream: a run's stream resumed past the run's final event (an EventSource stops here)" } } : {}),
        "4XX": problem,
        "5XX": problem,
      },
      security: [{ bearer: [] }],
    };
  }
  const refused = { description: "refused", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } };
  paths["/api/v1/auth/session"] = {
    post: {
      summary: "Exchange a token for a browser-session cookie (HttpOnly, SameSite=Strict; Secure over https); the token is in no response",
      tags: ["auth"],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["token"], properties: { token: { type: "string" } }, additionalProperties: false } } } },
      responses: { "200": { description: "signed in: the token's name and role, and when the session ends", headers: { "Set-Cookie": { schema: { type: "string" } } } }, "4XX": refused },
    },
  };
  paths["/api/v1/auth/logout"] = { post: { summary: "End this browser session and clear its cookie", tags: ["auth"], responses: { "200": { description: "signed out" } } } };
  return {
    openapi: "3.1.0",
    info: { title: "Stead API", version: "1" },
    paths,
    components: { schemas: { Problem: PROBLEM }, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  };
}
