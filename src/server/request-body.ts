/**
 * A request body under the size ceiling, read once. Hono's own body-limit middleware touches the
 * body stream of every request, which makes node-server build a full WHATWG Request (and a web
 * stream over the socket) for each one: a few hundred µs per request on a busy server. Here a
 * body with a Content-Length (what every client sends for a JSON body) is checked by its header
 * alone and read straight from node's IncomingMessage; a chunked one, whose size is only known
 * by reading, still goes through Hono's middleware, which enforces the ceiling as it reads.
 *
 * Invariant: a body over the ceiling is refused before any handler runs, whichever way it came.
 */
import type { IncomingMessage } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** Set by the ceiling check on a request whose body may be read from node's stream directly. */
const DIRECT = "steadDirectBody";

type Env = { Variables: { [DIRECT]?: IncomingMessage } };

function incomingOf(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming && typeof incoming.on === "function" ? incoming : undefined;
}

/** The ceiling: by Content-Length when the request has one, else while Hono reads the stream. */
export function bodyCeiling(maxBytes: number, tooLarge: (c: Context) => Response): MiddlewareHandler<Env> {
  const reading = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    const incoming = incomingOf(c);
    if (length === undefined || c.req.header("transfer-encoding") !== undefined || !incoming) return reading(c, next);
    // Node's parser refuses a malformed Content-Length (400) before a request gets here.
    if (Number(length) > maxBytes) return tooLarge(c);
    c.set(DIRECT, incoming);
    return next();
  };
}

/** The body as text (UTF-8, a leading byte order mark dropped, as `Request.text()` decodes it). */
export async function bodyText(c: Context): Promise<string> {
  const incoming = (c as Context<Env>).get(DIRECT);
  if (!incoming) return c.req.text();
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.once("end", resolve);
    incoming.once("error", reject);
    incoming.once("close", () => {
      if (!incoming.readableEnded) reject(new Error("the client closed the connection before its request body was sent"));
    });
  });
  return new TextDecoder().decode(Buffer.concat(chunks));
}
