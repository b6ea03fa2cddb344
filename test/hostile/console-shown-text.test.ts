/**
 * Issue 39, item 17: the console never shows a missing value as text. In real Chromium against a
 * real `stead serve --worker` on 127.0.0.1 (SQLite: what is shown does not depend on the store),
 * every page where a waiting approval step appears: the inbox's card with the run's last steps
 * open, the approval's own page, the waiting step's page and its run's page, for a workflow's
 * approval and for an agent's tool call, and the approval's page once decided. Each page is
 * scanned by the console helper's watch (test/helpers/console.ts, SHOWN_TEXT_WATCH), which every
 * console test goes through; here each page is also said to show what it should in words.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuild, ROOT, until } from "../cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsolePage, type ConsoleServer } from "../helpers/console.js";

const INBOX = join(ROOT, "test", "fixtures", "console", "inbox.ts");

let browser: Browser;
let server: ConsoleServer;

interface RunJson {
  run: { id: string; status: string };
  waits: { name: string; kind: string; status: string }[];
}

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);
const getRun = (id: string) => api<RunJson>("GET", `/runs/${encodeURIComponent(id)}`);
const openApproval = (id: string) => until(`run ${id}'s approval`, async () => (await getRun(id)).waits.find((w) => w.kind === "approval" && w.status === "open"), 30_000);

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [INBOX] })]);
}, 90_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

/** Opens `path`, waits for `ready`, and asserts the whole page shows no value as text. */
async function visit(c: ConsolePage, path: string, ready: (c: ConsolePage) => Promise<void>): Promise<void> {
  await c.page.goto(server.url + path);
  await ready(c);
  expect(await c.scanShown(), `${path} shows a value as text`).toEqual([]);
}

describe("a waiting approval step, wherever the console shows it", () => {
  it("a workflow's approval: the inbox card and its last steps, its page, the step's page and the run's page say it waits, and show no undefined", async () => {
    await api("POST", "/runs", { definition: "inbox-workflow", input: { item: "crate" }, id: "shown-wf" });
    await openApproval("shown-wf");
    const c = await openConsole(browser, server, { path: "/runs" });
    try {
      await visit(c, "/inbox", async ({ page }) => {
        const card = page.locator('[data-approval="shown-wf/ship"]');
        await card.getByText("What the run did before").click();
        const line = card.locator(".recent-steps li", { has: page.getByRole("link", { name: "ship", exact: true }) });
        await line.waitFor();
        // Its status says it; there is no output to show yet.
        expect((await line.innerText()).replace(/\s+/g, " ").trim()).toBe("ship approval waiting •");
      });
      await visit(c, "/inbox/shown-wf/ship", async ({ page }) => {
        await page.getByRole("heading", { name: "Approval ship" }).waitFor();
        await page.getByText("What the run did before").click();
        await page.locator(".recent-steps").getByRole("link", { name: "ship", exact: true }).waitFor();
      });
      await visit(c, "/runs/shown-wf/steps/ship", async ({ page }) => {
        const detail = page.locator(".step-detail");
        await detail.getByRole("heading", { name: "Step ship" }).waitFor();
        await detail.getByText(/no output yet/i).waitFor();
      });
      await visit(c, "/runs/shown-wf", async ({ page }) => {
        await page.locator('tr[data-step="ship"]').waitFor();
        await page.getByRole("heading", { name: "Latest events" }).waitFor();
      });
      // Decided: its page says what was decided, as words and as the recorded result.
      await api("POST", "/runs/shown-wf/waits/ship/approve", {});
      await until("shown-wf to complete", async () => ((await getRun("shown-wf")).run.status === "completed" ? true : undefined), 30_000);
      await visit(c, "/inbox/shown-wf/ship", async ({ page }) => {
        await page.getByRole("heading", { name: "ship is decided" }).waitFor();
      });
      await visit(c, "/runs/shown-wf/steps/ship", async ({ page }) => {
        await page.locator(".step-detail").getByRole("heading", { name: "Output" }).waitFor();
      });
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("an agent's tool call waiting for approval: its card, its page and its steps' pages show no undefined", async () => {
    await api("POST", "/runs", { definition: "inbox-agent", input: "record alpha", id: "shown-agent" });
    const approval = await openApproval("shown-agent");
    const c = await openConsole(browser, server, { path: "/runs" });
    try {
      await visit(c, "/inbox", async ({ page }) => {
        const card = page.locator(`[data-approval="shown-agent/${approval.name}"]`);
        await card.getByRole("heading", { name: "Tool call record" }).waitFor();
        await card.getByText("What the run did before").click();
        await card.locator(".recent-steps li").first().waitFor();
      });
      await visit(c, `/inbox/shown-agent/${encodeURIComponent(approval.name)}`, async ({ page }) => {
        await page.getByRole("heading", { name: "Tool call record" }).waitFor();
      });
      const journal = await api<{ steps: { id: string; status: string }[] }>("GET", "/runs/shown-agent/journal");
      const waiting = journal.steps.filter((s) => s.status !== "completed");
      expect(waiting.length).toBeGreaterThan(0);
      for (const s of journal.steps) {
        await visit(c, `/runs/shown-agent/steps/${encodeURIComponent(s.id)}`, async ({ page }) => {
          await page.locator(".step-detail").getByRole("heading", { name: `Step ${s.id}` }).waitFor();
          await page.getByRole("heading", { name: "Conversation" }).waitFor();
        });
      }
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
