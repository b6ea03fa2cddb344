/**
 * The console's shell in real Chromium against a real `stead serve` on 127.0.0.1: sign-in by the
 * one-time URL (its token leaves the address bar), by a pasted token, sign-out (the cookie no
 * longer opens the API), the Content-Security-Policy on every console answer, a lost connection
 * said and recovered, and no error logged by any page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { requireBuild } from "./cli-helpers.js";
import { launchBrowser, openConsole, serveConsole, type ConsoleServer } from "./helpers/console.js";

let browser: Browser;
let server: ConsoleServer;

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole()]);
}, 90_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("the console's shell", () => {
  it("signs in by the one-time URL: the token leaves the address bar and history, the page is served under a self-only CSP, nothing is logged as an error", async () => {
    const c = await openConsole(browser, server, { signIn: "login-url" });
    try {
      expect(c.page.url()).not.toContain("token");
      expect(await c.page.evaluate("location.hash")).toBe("");
      await expect(c.page.getByText(/\(operator\)/).textContent()).resolves.toMatch(/^serve-login\./);
      const res = await c.page.request.get(`${server.url}/runs`);
      const csp = res.headers()["content-security-policy"] ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      // A pasted link to a page opens that page.
      await c.page.goto(`${server.url}/definitions`);
      await c.page.getByRole("link", { name: "Definitions" }).waitFor();
      expect(await c.page.getByRole("link", { name: "Definitions" }).getAttribute("aria-current")).toBe("page");
      // The login link was used: opening it again signs nobody in.
      const again = await browser.newContext();
      const p2 = await again.newPage();
      await p2.goto(server.loginUrl);
      await p2.getByText(/login link was used already/).waitFor();
      await again.close();
      // By keyboard alone: the first Tab reaches the skip link, the next ones the sections; Enter follows one.
      await c.page.goto(`${server.url}/runs`);
      await c.page.getByRole("link", { name: "Runs", exact: true }).waitFor();
      await c.page.keyboard.press("Tab");
      expect(await c.page.evaluate("document.activeElement && document.activeElement.textContent")).toBe("Skip to content");
      for (let i = 0; i < 8 && (await c.page.evaluate("document.activeElement && document.activeElement.textContent")) !== "Holds"; i++) await c.page.keyboard.press("Tab");
      await c.page.keyboard.press("Enter");
      await c.page.waitForURL(`${server.url}/holds`);
      expect(await c.page.getByRole("link", { name: "Holds" }).getAttribute("aria-current")).toBe("page");
      await c.shot("shell-signed-in");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("signs in with a pasted token as a viewer, and signs out: the session's cookie no longer opens the API", async () => {
    const token = await server.token("viewer", "vera");
    const c = await openConsole(browser, server, { signIn: false, path: "/runs" });
    try {
      // On loopback the console opens read-only without a token, and offers to sign in.
      await c.page.getByText("anonymous").waitFor();
      await c.page.getByRole("button", { name: "Sign in" }).click();
      await c.page.getByLabel("Token").fill(token);
      await c.page.getByRole("button", { name: "Sign in" }).click();
      await c.page.getByText("vera (viewer)").waitFor();
      expect(await c.page.evaluate<unknown>(async () => (await fetch("/api/v1/auth/me")).json())).toMatchObject({ name: "vera", role: "viewer" });
      await c.page.getByRole("button", { name: "Sign out" }).click();
      await c.page.getByRole("button", { name: "Sign in" }).waitFor();
      // On loopback reads are open without a token; a control command is not.
      const status = await c.page.evaluate(async () => (await fetch("/api/v1/runs/x/pause", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status);
      expect(status).toBe(401);
      expect((await c.context.cookies()).filter((k) => k.name.startsWith("stead_session"))).toEqual([]);
      expect(c.errors.filter((e) => !/401/.test(e))).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("says when the connection is lost, and when a restarted server no longer knows the session; signing in again recovers (at a phone's width, in dark mode)", async () => {
    const own = await serveConsole();
    const port = new URL(own.url).port;
    let again: ConsoleServer | undefined;
    const c = await openConsole(browser, own, { width: 390, colorScheme: "dark" });
    try {
      await c.page.getByRole("link", { name: "Runs" }).first().waitFor();
      await c.shot("shell-phone-dark");
      await own.stop();
      await c.page.getByText(/connection to the server was lost/).waitFor({ timeout: 30_000 });
      // The same store on the same address: its tokens stand, the browser sessions (in memory) do not.
      again = await serveConsole({ dir: own.dir, args: [] , port });
      await c.page.getByText(/session has ended/).waitFor({ timeout: 30_000 });
      expect(await c.page.getByText(/connection to the server was lost/).count()).toBe(0);
      await c.page.getByRole("button", { name: "Sign in again" }).click();
      await c.page.getByLabel("Token").fill(await own.token("operator", "olga"));
      await c.page.getByRole("button", { name: "Sign in" }).click();
      await c.page.getByText("olga (operator)").waitFor();
      expect(await c.page.getByText(/session has ended|connection to the server was lost/).count()).toBe(0);
      expect(c.errors.filter((e) => !/401|ERR_CONNECTION_REFUSED|Failed to load resource/.test(e))).toEqual([]);
    } finally {
      await c.close();
      await again?.stop();
    }
  });
});
