/**
 * Issue 39, item 18, in the console: a run's stream now ends after the run's final event, and the
 * run page's log must not stop there for good: a cancelled run resumed from elsewhere goes on,
 * and the log shows what it does next without a reload. Real Chromium against a real
 * `stead serve --worker` on 127.0.0.1.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuild, ROOT, until } from "../cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsoleServer } from "../helpers/console.js";

const FIXTURE = join(ROOT, "test", "fixtures", "console", "runs.ts");

let browser: Browser;
let server: ConsoleServer;

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [FIXTURE] })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("a run page's log", () => {
  it("shows a cancelled run's end, then what it does once resumed, without a reload", async () => {
    const api = <T>(method: string, path: string, body?: unknown) => operatorCall<T>(server, method, path, body);
    const status = async () => (await api<{ run: { status: string } }>("GET", "/runs/log-1")).run.status;
    await api("POST", "/runs", { definition: "console-approval", input: { item: "box" }, id: "log-1" });
    await until("the run to wait for its approval", async () => ((await status()) === "waiting" ? true : undefined), 30_000);
    const c = await openConsole(browser, server, { path: "/runs/log-1" });
    try {
      const log = c.page.locator(".run-logs");
      await log.getByText("run.waiting").first().waitFor({ timeout: 15_000 });
      await c.page.evaluate("window.__sameDocument = true");
      await api("POST", "/runs/log-1/cancel", { reason: "not now" });
      await log.getByText("run.cancelled").waitFor({ timeout: 15_000 });
      await api("POST", "/runs/log-1/resume", {});
      await log.getByText("run.resumed").waitFor({ timeout: 15_000 });
      // The resumed run is claimed again and parks at its approval: the log follows it there.
      await until("the resumed run to wait again", async () => ((await status()) === "waiting" ? true : undefined), 30_000);
      await until("a second run.waiting in the log", async () => ((await log.getByText("run.waiting").count()) >= 2 ? true : undefined), 15_000);
      expect(await c.page.evaluate("window.__sameDocument")).toBe(true);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
