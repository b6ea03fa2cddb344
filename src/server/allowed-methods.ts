/**
 * Which methods a path is served with, from the app's own route table: a request whose path
 * exists with other methods is answered 405 with an `Allow` header naming them (RFC 9110 15.5.6),
 * and only a path no route has is 404. Read from the registered routes, so a route added anywhere
 * (the route table, sign-in, the console, MCP) is counted without a line here.
 */
export interface RegisteredRoute {
  readonly method: string;
  readonly path: string;
}

/** `allow(path)`: the methods sorted (HEAD wherever GET is: Hono answers it with the GET handler), empty for a path no route has. */
export function allowedMethods(routes: readonly RegisteredRoute[]): (path: string) => string[] {
  const table: { pattern: RegExp; method: string }[] = [];
  for (const r of routes) {
    // Middleware (`app.use`) is registered as ALL: it serves no path.
    if (r.method === "ALL") continue;
    table.push({ pattern: patternOf(r.path), method: r.method.toUpperCase() });
  }
  return (path) => {
    const methods = new Set<string>();
    for (const t of table) if (t.pattern.test(path)) methods.add(t.method);
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}

/** A Hono route path as an anchored expression: `:name` (with or without its own `{…}` pattern) one segment, `*` anything. */
function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (segment.startsWith(":")) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}$`);
}
