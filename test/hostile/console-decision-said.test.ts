/**
 * Issue 39, item 18: a decision made in the inbox is said after its card has gone: what was
 * decided (approved or denied, for which calls, with edited arguments or a reason) and by whom,
 * as the server recorded it; the approval's own page says the same in words. And a caller who may
 * not decide is told why there are no buttons: reading anonymously, that signing in allows it
 * (and the button to sign in, which leads to the buttons); a viewer, that its role only reads.
 * In real Chromium against a real `stead serve --worker` on 127.0.0.1 (SQLite: what the page says
 * does not depend on the store); what was decided is checked against the store's wait rows.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuild, ROOT, until } from "../cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, roleToken, serveConsole, type ConsoleServer } from "../helpers/console.js";

const INBOX = join(ROOT, "test", "fixtures", "console", "inbox.ts");

let browser: Browser;
let server: ConsoleServer;

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);
const start = (definition: string, input: unknown, id: string) => api<{ id: string }>("POST", "/runs", { definition, input, id });
const openWait = (id: string) =>
  until(`run ${id}'s approval`, async () => (await api<{ waits: { name: string; kind: string; status: string }[] }>("GET", `/runs/${id}`)).waits.find((w) => w.kind === "approval" && w.status === "open"), 30_000);

/** A wait's row as the store holds it (read-only, from the SQLite file). */
function waitRow(runId: string, name: string): { status: string; resolved_by: string | null } | undefined {
  const db = new Database(join(server.dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT status, resolved_by FROM waits WHERE run_id = ? AND name = ?").get(runId, name) as { status: string; resolved_by: string | null } | undefined;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [INBOX] })]);
}, 90_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("a decision made in the inbox", () => {
  it("is said after its card has gone: approved or denied, how, and by whom; the approval's page says it too", async () => {
    await start("inbox-workflow", { item: "one" }, "said-wf-1");
    await start("inbox-workflow", { item: "two" }, "said-wf-2");
    await start("inbox-agent", "record alpha", "said-agent");
    const tool = await openWait("said-agent");
    await openWait("said-wf-1");
    await openWait("said-wf-2");
    const c = await openConsole(browser, server, { path: "/inbox" });
    try {
      const note = (runId: string, wait: string) => c.page.locator(`[data-decided="${runId}/${wait}"]`);

      const first = c.page.locator('[data-approval="said-wf-1/ship"]');
      await first.getByLabel(/^Reason/).fill("fine by me");
      await first.getByRole("button", { name: "Approve" }).click();
      await first.waitFor({ state: "detached", timeout: 15_000 });
      await note("said-wf-1", "ship").waitFor();
      expect(await note("said-wf-1", "ship").innerText()).toMatch(/^ship of run said-wf-1: Approved by console-operator .+\. Reason: fine by me/);
      expect(waitRow("said-wf-1", "ship")).toEqual({ status: "resolved", resolved_by: "console-operator" });

      const second = c.page.locator('[data-approval="said-wf-2/ship"]');
      await second.getByRole("button", { name: "Deny" }).click();
      await second.waitFor({ state: "detached", timeout: 15_000 });
      await note("said-wf-2", "ship").waitFor();
      expect(await note("said-wf-2", "ship").innerText()).toMatch(/^ship of run said-wf-2: Denied by console-operator [^.]+\./);
      expect(waitRow("said-wf-2", "ship")).toEqual({ status: "resolved", resolved_by: "console-operator" });

      const third = c.page.locator(`[data-approval="said-agent/${tool.name}"]`);
      await third.locator(".recent-steps").waitFor({ state: "attached" });
      await third.getByLabel(/every call of/).check();
      await third.getByRole("button", { name: "Approve", exact: true }).click();
      await third.waitFor({ state: "detached", timeout: 15_000 });
      await note("said-agent", tool.name).waitFor();
      expect(await note("said-agent", tool.name).innerText()).toMatch(/Approved by console-operator .+, for every call of record for the rest of the run\./);

      // Newest first, each until dismissed.
      expect(await c.page.evaluate<(string | null)[]>(`[...document.querySelectorAll("[data-decided]")].map((e) => e.getAttribute("data-decided"))`)).toEqual([`said-agent/${tool.name}`, "said-wf-2/ship", "said-wf-1/ship"]);
      await note("said-wf-2", "ship").getByRole("button", { name: /Dismiss/ }).click();
      await note("said-wf-2", "ship").waitFor({ state: "detached" });
      await c.shot("inbox-decided");

      // The approval's own page says what was decided, in words.
      await c.page.goto(`${server.url}/inbox/said-wf-1/ship`);
      await c.page.getByRole("heading", { name: "ship is decided" }).waitFor();
      expect(await c.page.locator(".decision").innerText()).toMatch(/^Approved by console-operator .+\. Reason: fine by me Run said-wf-1 is (running|completed)/);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});

describe("a caller who may not decide", () => {
  it("reading anonymously, is told that signing in allows deciding, and the sign-in leads to the buttons", async () => {
    await start("inbox-workflow", { item: "three" }, "said-anon");
    await openWait("said-anon");
    const c = await openConsole(browser, server, { signIn: false, path: "/inbox" });
    try {
      const card = c.page.locator('[data-approval="said-anon/ship"]');
      await card.getByRole("heading", { name: "Approval ship" }).waitFor();
      expect(await c.page.locator("main").getByRole("button", { name: /Approve|Deny/ }).count()).toBe(0);
      const told = c.page.locator("main .may-not");
      expect(await told.innerText()).toMatch(/reading anonymously: sign in with an operator's or an admin's token to approve or deny/);
      // Said once for the page, not on every card.
      expect(await told.count()).toBe(1);
      await told.getByRole("button", { name: "Sign in" }).click();
      await c.page.getByLabel("Token").fill(await roleToken(server, "operator"));
      await c.page.getByRole("button", { name: "Sign in" }).click();
      await card.getByRole("button", { name: "Approve" }).waitFor();
      expect(await c.page.locator("main .may-not").count()).toBe(0);
      expect(c.errors.filter((e) => !/401/.test(e))).toEqual([]);
    } finally {
      await c.close();
    }

    // The approval's own page says it too.
    const one = await openConsole(browser, server, { signIn: false, path: "/inbox/said-anon/ship" });
    try {
      await one.page.getByRole("heading", { name: "Approval ship" }).waitFor();
      await one.page.locator("main .may-not").getByText(/sign in with an operator's or an admin's token/).waitFor();
      expect(one.errors.filter((e) => !/401/.test(e))).toEqual([]);
    } finally {
      await one.close();
    }
  });

  it("signed in as a viewer, is told that its role reads approvals but does not decide them", async () => {
    await openWait("said-anon");
    const c = await openConsole(browser, server, { signIn: "viewer", path: "/inbox" });
    try {
      await c.page.locator('[data-approval="said-anon/ship"]').getByRole("heading", { name: "Approval ship" }).waitFor();
      expect(await c.page.locator("main .may-not").innerText()).toMatch(/Your role \(viewer\) may read approvals but not decide them/);
      expect(await c.page.locator("main").getByRole("button", { name: /Approve|Deny|Sign in/ }).count()).toBe(0);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
