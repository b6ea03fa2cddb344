/**
 * Driving the web console in real headless Chromium (Debian's `chromium`, through playwright-core;
 * nothing downloads a browser): one browser per test file, a real `stead serve` (with a worker
 * where a test needs one) on 127.0.0.1, and a page signed in through the one-time URL the server
 * printed. Every page records what the browser logged as an error, and a request that failed;
 * `shot` writes a screenshot to test-results/console/ (not committed) for a person to look at.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
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
  /** What the page logged as an error (console.error, an uncaught exception, a CSP violation). */
  errors: string[];
  /** Writes test-results/console/<name>.png. */
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

const tokens = new WeakMap<ConsoleServer, Map<string, Promise<string>>>();

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
  const page = await context.newPage();
  const errors: string[] = [];
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
  return {
    page,
    context,
    errors,
    shot: async (name) => {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    },
    close: () => context.close(),
  };
}
