/**
 * The web console: the single-page app built into `dist/console` (console/, `npm run build`),
 * served at the console's own paths. Every page path answers the same `index.html`; the app
 * routes by URL. Nothing but these files is served from disk: an asset's name is one path
 * segment of the built `assets/` folder, matched against what the build wrote.
 *
 * Its Content-Security-Policy allows scripts, styles and connections of this origin only: no
 * inline script or style, nothing from elsewhere, no frames. What the console shows of a model,
 * a tool or a user is set as text, never as HTML (console/README.md).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The console's page paths: each answers index.html (a link to any of them can be pasted in a chat). */
export const CONSOLE_PATHS = ["/", "/runs", "/runs/*", "/inbox", "/inbox/*", "/holds", "/holds/*", "/sessions", "/sessions/*", "/definitions"] as const;

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
};

export interface ConsoleAssets {
  /** index.html, answered for every page path. */
  page(): Response;
  /** A built asset by its file name, or undefined when the build has none of that name. */
  asset(name: string): Response | undefined;
}

/** The built console, or undefined when it is not built (a checkout that has not run `npm run build`). */
export function loadConsole(dir = consoleDir()): ConsoleAssets | undefined {
  if (dir === undefined) return undefined;
  const html = readFileSync(join(dir, "index.html"));
  const assets = new Map<string, { body: Buffer; type: string }>();
  const assetDir = join(dir, "assets");
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const type = TYPES[extname(name)];
      if (type !== undefined) assets.set(name, { body: readFileSync(join(assetDir, name)), type });
    }
  }
  const headers = (type: string, cache: string) => ({
    "Content-Type": type,
    "Content-Security-Policy": CONSOLE_CSP,
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": cache,
  });
  return {
    page: () => new Response(new Uint8Array(html), { status: 200, headers: headers("text/html; charset=utf-8", "no-store") }),
    asset: (name) => {
      const a = assets.get(name);
      // Asset names carry a hash of their content: a name never changes meaning.
      return a && new Response(new Uint8Array(a.body), { status: 200, headers: headers(a.type, "public, max-age=31536000, immutable") });
    },
  };
}

/** dist/console beside the built server (dist/server), or from the sources (src/server) the repository's. */
function consoleDir(): string | undefined {
  for (const dir of [join(__dirname, "..", "console"), join(__dirname, "..", "..", "dist", "console")]) {
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  return undefined;
}
