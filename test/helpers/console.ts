/**
 * Driving the web console in real headless Chromium (Debian's `chromium`, through playwright-core;
 * nothing downloads a browser): one browser per test file, a real `stead serve` (with a worker
 * where a test needs one) on 127.0.0.1, and a page signed in through the one-time URL the server
 * printed. Every page records what the browser logged as an error, and a request that failed;
 * `shot` writes a screenshot to test-results/console/ (not committed) for a person to look at.
 *
 * Every page also watches what it shows (SHOWN_TEXT_WATCH): a text or a visible attribute that
 * reads `undefined`, `NaN`, `[object Object]` or a bare `null` is a value leaking into the page
 * as text. Each one is recorded as an error when it appears (so a test's `errors` check fails at
 * once), and `close()` scans the page a last time and fails the test on any (softly, so a failure
 * the test met first is reported too): every test that opens a page through `openConsole` is
 * held to it, whether it checks `errors` or not.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { expect } from "vitest";
import { cli, ROOT, spawnCli, tempDir, until, type CliProcess } from "../cli-helpers.js";

export const CHROMIUM = process.env.STEAD_TEST_CHROMIUM ?? "/usr/bin/chromium";
export const SHOTS = join(ROOT, "test-results", "console");

/** Whether the browser is here: `.ci/run` installs it; a machine without it says so rather than skipping quietly. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set STEAD_TEST_CHROMIUM`);
}

export async function launchBrowser(): Promise<Browser> {
  requireChromium();
  const args = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}

export interface ConsoleServer {
  url: string;
  /** The one-time sign-in URL (an admin's token in its fragment). */
  loginUrl: string;
  dir: string;
  process: CliProcess;
  /** Creates a token of `role` with the CLI (for signing in as another role). */
  token(role: "viewer" | "operator" | "admin", name: string): Promise<string>;
  stop(): Promise<void>;
}

/** `stead serve` on 127.0.0.1, over an SQLite store in `dir`; `worker`: files a worker in the same process serves. */
export async function serveConsole(options: { dir?: string; worker?: string[]; args?: string[]; env?: Record<string, string>; port?: string } = {}): Promise<ConsoleServer> {
  const dir = options.dir ?? tempDir("stead-console-");
  const worker = (options.worker ?? []).flatMap((f) => ["--worker", f]);
  const proc = spawnCli(["serve", "--listen", `127.0.0.1:${options.port ?? "0"}`, ...worker, ...(worker.length > 0 ? ["--poll", "200"] : []), "--login-url", ...(options.args ?? [])], dir, { timeoutMs: 600_000, ...(options.env ? { env: options.env } : {}) });
  let url: string;
  let loginUrl: string;
  try {
    url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(proc.stdout())?.[1] ?? (proc.child.exitCode !== null ? fail(proc) : undefined), 60_000);
    loginUrl = await until("the login URL", () => /sign in a browser .*?: (http:\/\/\S+#token=\S+)/.exec(proc.stdout())?.[1], 10_000);
  } catch (e) {
    proc.child.kill("SIGKILL");
    throw e;
  }
  return {
    url,
    loginUrl,
    dir,
    process: proc,
    token: async (role, name) => {
      const r = await cli(["tokens", "create", "--role", role, "--name", name, "--json"], dir);
      if (r.code !== 0) throw new Error(`tokens create: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { token: string }).token;
    },
    stop: async () => {
      if (proc.child.exitCode === null) proc.child.kill("SIGTERM");
      await proc.done;
    },
  };
}

function fail(proc: CliProcess): never {
  throw new Error(`stead serve exited ${proc.child.exitCode}:\n${proc.stdout()}\n${proc.stderr()}`);
}

/** A JSON call of the server's API as its operator (`console-operator`): what a test arranges or reads back beside the page. */
export async function operatorCall<T>(server: ConsoleServer, method: string, path: string, body?: unknown): Promise<T> {
  const token = await roleToken(server, "operator");
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** What the page logged as an error (console.error, an uncaught exception, a CSP violation), and each value shown as text (`shownBadly`). */
  errors: string[];
  /** Each `undefined`, `NaN`, `[object Object]` or bare `null` the page showed as text, with where (see SHOWN_TEXT_WATCH). */
  shownBadly: string[];
  /** The page as it is now, scanned whole: what it shows badly (also added to `shownBadly`). */
  scanShown(): Promise<string[]>;
  /** Writes test-results/console/<name>.png. */
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

const tokens = new WeakMap<ConsoleServer, Map<string, Promise<string>>>();

/**
 * Runs in every document of a console context before its own scripts: `window.__steadScan(root)`
 * lists the bad texts under `root`, and a MutationObserver reports each one as it appears (a
 * value shown for a moment, then replaced, is caught too) through `__steadShownBadly`. Text in a
 * closed <details> counts: it is one click from being read. A `null` counts unless it is a value
 * inside JSON shown as JSON (after `:`, `[` or `,`, with a `{` or `[` before it in the same text).
 */
export const SHOWN_TEXT_WATCH = String.raw`(() => {
  const WORDS = /\b(undefined|NaN|null)\b|\[object Object\]/g;
  const ATTRS = ["title", "aria-label", "placeholder", "alt"];
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"]);
  const jsonNull = (text, at) => {
    const before = text.slice(0, at).replace(/\s+$/, "");
    return /[:\[,]$/.test(before) && /[{\[]/.test(before);
  };
  const badIn = (text) => {
    for (const m of text.matchAll(WORDS)) if (!(m[1] === "null" && jsonNull(text, m.index))) return true;
    return false;
  };
  const where = (el) => {
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && parts.length < 4; e = e.parentElement) parts.unshift(e.tagName.toLowerCase() + (e.classList.length ? "." + [...e.classList].join(".") : ""));
    return parts.join(" > ");
  };
  const around = (el) => ((el && el.closest("li, tr, p, dd, h1, h2, h3, pre, article, section")) || el || document.body).textContent.replace(/\s+/g, " ").trim().slice(0, 160);
  const found = (text, el, what) => (what + " " + JSON.stringify(text.trim().slice(0, 80)) + " in " + where(el) + ': "' + around(el) + '" at ' + location.pathname + location.search);
  const skipped = (el) => { for (let e = el; e; e = e.parentElement) if (SKIP.has(e.tagName)) return true; return false; };
  const scan = (root) => {
    const out = [];
    const visit = (node) => {
      if (node.nodeType === 3) {
        const el = node.parentElement;
        if (el && !skipped(el) && badIn(node.data)) out.push(found(node.data, el, "text"));
        return;
      }
      if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
      if (node.nodeType === 1) {
        if (SKIP.has(node.tagName)) return;
        for (const a of ATTRS) { const v = node.getAttribute(a); if (v !== null && badIn(v)) out.push(found(v, node, a)); }
      }
      for (const c of node.childNodes) visit(c);
    };
    visit(root);
    return out;
  };
  window.__steadScan = scan;
  const report = (list) => { for (const x of list) if (typeof window.__steadShownBadly === "function") void window.__steadShownBadly(x); };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "characterData") report(scan(r.target));
      else if (r.type === "attributes") { const v = r.target.getAttribute(r.attributeName); if (v !== null && badIn(v)) report([found(v, r.target, r.attributeName)]); }
      else for (const n of r.addedNodes) report(scan(n));
    }
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ATTRS });
})();`;

/** A token of `role` for this server, made once (named `console-<role>`). */
export function roleToken(server: ConsoleServer, role: "viewer" | "operator" | "admin"): Promise<string> {
  let mine = tokens.get(server);
  if (!mine) tokens.set(server, (mine = new Map<string, Promise<string>>()));
  let t = mine.get(role);
  if (!t) mine.set(role, (t = server.token(role, `console-${role}`)));
  return t;
}

/**
 * A fresh browser context at `width`, signed in (by default as an operator, `console-operator`)
 * through a URL whose fragment carries the token, as the one-time URL does; `signIn: "login-url"`
 * uses the server's own one-time URL (once per server), false signs nobody in.
 */
export async function openConsole(
  browser: Browser,
  server: ConsoleServer,
  options: { signIn?: false | "login-url" | "viewer" | "operator" | "admin"; width?: number; colorScheme?: "light" | "dark"; path?: string } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.colorScheme ?? "light", timezoneId: "Europe/Berlin", locale: "en-GB" });
  const errors: string[] = [];
  const shownBadly: string[] = [];
  const record = (x: string) => {
    if (shownBadly.includes(x)) return;
    shownBadly.push(x);
    errors.push(`shown as text: ${x}`);
  };
  await context.exposeBinding("__steadShownBadly", (_source, x: unknown) => record(String(x)));
  await context.addInitScript(SHOWN_TEXT_WATCH);
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  const signIn = options.signIn ?? "operator";
  if (signIn !== false) {
    await page.goto(signIn === "login-url" ? server.loginUrl : `${server.url}${options.path ?? "/"}#token=${await roleToken(server, signIn)}`);
    await page.getByRole("button", { name: "Sign out" }).waitFor({ timeout: 20_000 });
    if (options.path && signIn === "login-url") await page.goto(server.url + options.path);
  } else await page.goto(server.url + (options.path ?? "/"));
  const scanShown = async (): Promise<string[]> => {
    const now = await page.evaluate<string[]>("typeof window.__steadScan === 'function' ? window.__steadScan(document) : []");
    for (const x of now) record(x);
    return now;
  };
  return {
    page,
    context,
    errors,
    shownBadly,
    scanShown,
    shot: async (name) => {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      // The page as it was left, whole; a closed page (or one gone to another origin) has nothing more to say.
      if (!page.isClosed()) await scanShown().catch(() => undefined);
      await context.close();
      // Soft: a test that failed before its `finally` closed the page keeps its own failure, reported beside this one.
      expect.soft(shownBadly.join("\n"), "the console showed a value as text (undefined, NaN, [object Object] or a bare null)").toBe("");
    },
  };
}
