/**
 * The runs list and one run's page in real Chromium against a real `stead serve --worker` on
 * 127.0.0.1: a status change shown without a reload, filters and cursor pages held in the URL, a
 * 10,000-step journal paged (a bounded number of rows in the DOM, the last page reachable), why's
 * way out taken by its button (the store's run moves on), a fork from a step, an agent's
 * conversation with its tool call and result, and markup a model or tool wrote shown as text.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT, until } from "./cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsoleServer } from "./helpers/console.js";

const FIXTURE = join(ROOT, "test", "fixtures", "console", "runs.ts");
const MANY = join(ROOT, "test", "fixtures", "console", "many.ts");
const MARKUP = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

let browser: Browser;
let server: ConsoleServer;

interface RunJson {
  run: { id: string; status: string; output: unknown; parentId: string | null };
  waits: { name: string; status: string; resolvedBy: string | null }[];
}

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);

const start = (definition: string, input: unknown, id: string) => api<{ id: string }>("POST", "/runs", { definition, input, id });
const getRun = (id: string) => api<RunJson>("GET", `/runs/${encodeURIComponent(id)}`);
const settled = (id: string, status = "completed") => until(`run ${id} to be ${status}`, async () => ((await getRun(id)).run.status === status ? true : undefined), 30_000);

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [FIXTURE] })]);
  // The long run is executed by the CLI in its own process, over the server's store.
  const big = await cli(["run", MANY, "--input", JSON.stringify({ steps: 10_000 }), "--id", "big"], server.dir, { timeoutMs: 60_000 });
  if (big.code !== 0) throw new Error(`stead run: ${big.stderr}`);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("the runs list", () => {
  it("shows a run's status change without a reload", async () => {
    const gate = join(server.dir, "gate-live");
    await start("console-gated", { gate }, "live-1");
    const c = await openConsole(browser, server, { path: "/runs" });
    try {
      const row = c.page.locator('tr[data-run="live-1"]');
      await row.getByText("running").waitFor({ timeout: 15_000 });
      await c.page.evaluate("window.__sameDocument = true");
      writeFileSync(gate, "");
      await row.getByText("completed").waitFor({ timeout: 15_000 });
      // The listing's last step, re-read with the status.
      await row.getByText("two", { exact: true }).waitFor({ timeout: 5_000 });
      expect(await c.page.evaluate("window.__sameDocument")).toBe(true);
      expect((await getRun("live-1")).run.status).toBe("completed");
      await c.shot("runs-list");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("filters by id prefix, status and definition, and pages by cursor, with the view in the URL", async () => {
    for (let i = 1; i <= 5; i++) await start("console-quick", { n: i }, `page-${i}`);
    await start("console-approval", { item: "box" }, "page-wait");
    await Promise.all([1, 2, 3, 4, 5].map((i) => settled(`page-${i}`)));
    await settled("page-wait", "waiting");
    const c = await openConsole(browser, server, { path: "/runs?q=page-&limit=2&sort=createdAt&order=asc" });
    try {
      // One read of every row at once: a live re-render between rows cannot leave a stale handle.
      const ids = () => c.page.evaluate<(string | null)[]>(`[...document.querySelectorAll("tr[data-run]")].map((r) => r.getAttribute("data-run"))`);
      await c.page.locator('tr[data-run="page-1"]').waitFor();
      expect(await ids()).toEqual(["page-1", "page-2"]);
      await c.page.getByRole("link", { name: "Next" }).click();
      await c.page.locator('tr[data-run="page-3"]').waitFor();
      expect(await ids()).toEqual(["page-3", "page-4"]);
      expect(new URL(c.page.url()).searchParams.get("cursor")).toBeTruthy();
      // The URL is the view: opening it again shows the same page.
      await c.page.reload();
      await c.page.locator('tr[data-run="page-3"]').waitFor();
      expect(await ids()).toEqual(["page-3", "page-4"]);
      await c.page.getByRole("link", { name: "First page" }).click();
      await c.page.locator('tr[data-run="page-1"]').waitFor();
      expect(await ids()).toEqual(["page-1", "page-2"]);
      // A status filter starts again at the first page.
      await c.page.getByLabel("waiting").check();
      await until("only the waiting run", async () => ((await ids()).join() === "page-wait" ? true : undefined), 10_000);
      expect(new URL(c.page.url()).searchParams.get("status")).toBe("waiting");
      await c.page.getByLabel("waiting").uncheck();
      await c.page.getByLabel("Definition").fill("console-quick");
      await c.page.getByLabel("Definition").press("Enter");
      await until("only console-quick runs", async () => ((await ids()).join() === "page-1,page-2" ? true : undefined), 10_000);
      expect(await c.page.locator('tr[data-run="page-wait"]').count()).toBe(0);
      // Runs that need a person are counted.
      await c.page.locator(".badge").waitFor();
      expect(Number.parseInt((await c.page.locator("h1 .badge").textContent()) ?? "", 10)).toBeGreaterThanOrEqual(1);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});

describe("a run's page", () => {
  it("pages a 10,000-step journal: a bounded number of rows in the DOM, the last page reachable", async () => {
    const c = await openConsole(browser, server, { path: "/runs/big" });
    try {
      await c.page.locator('tr[data-step="s0"]').waitFor({ timeout: 20_000 });
      expect(await c.page.locator("table.journal tbody tr").count()).toBe(100);
      expect(await c.page.locator("tr").count()).toBeLessThan(150);
      await c.page.getByText("of 10,000").first().waitFor();
      await c.page.getByRole("link", { name: "Last" }).first().click();
      await c.page.locator('tr[data-step="s9999"]').waitFor({ timeout: 20_000 });
      expect(await c.page.locator("table.journal tbody tr").count()).toBe(100);
      expect(await c.page.locator('tr[data-step="s0"]').count()).toBe(0);
      // A step's detail on selection, and its link names its page.
      await c.page.getByRole("link", { name: "s9998", exact: true }).click();
      await c.page.getByRole("heading", { name: "Step s9998" }).waitFor();
      expect(new URL(c.page.url()).pathname).toBe("/runs/big/steps/s9998");
      await c.page.locator(".step-detail pre").getByText("9998", { exact: true }).waitFor();
      // A pasted link to a step deep in the journal, with no page in it, opens that step's page.
      await c.page.goto(`${server.url}/runs/big/steps/s4321`);
      await c.page.getByRole("heading", { name: "Step s4321" }).waitFor({ timeout: 20_000 });
      await c.page.locator('tr[data-step="s4321"]').waitFor();
      expect(await c.page.locator("table.journal tbody tr").count()).toBe(100);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("takes why's way out by its button (the run moves on), hides it from a viewer, and forks from a step", async () => {
    await start("console-approval", { item: "crate" }, "ask-1");
    await settled("ask-1", "waiting");
    const viewer = await openConsole(browser, server, { signIn: "viewer", path: "/runs/ask-1" });
    try {
      await viewer.page.getByRole("heading", { name: "Why it is waiting" }).waitFor();
      expect(await viewer.page.getByRole("button", { name: /approve/ }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: /Fork/ }).count()).toBe(0);
    } finally {
      await viewer.close();
    }
    const c = await openConsole(browser, server, { path: "/runs/ask-1" });
    try {
      await c.page.getByText(/is parked with no process, waiting for approval "ship"/).waitFor();
      await c.page.getByRole("button", { name: 'approve "ship"' }).click();
      await settled("ask-1");
      const after = await getRun("ask-1");
      expect(after.run.output).toBe("shipped crate");
      expect(after.waits.find((w) => w.name === "ship")?.resolvedBy).toContain("console-operator");
      // The page follows without a reload.
      await c.page.getByRole("heading", { name: "Why it is completed" }).waitFor({ timeout: 15_000 });
      await c.page.getByRole("button", { name: "Fork from step prepare" }).click();
      await c.page.waitForURL((u) => u.pathname.startsWith("/runs/") && u.pathname !== "/runs/ask-1", { timeout: 15_000 });
      const forked = decodeURIComponent(new URL(c.page.url()).pathname.slice("/runs/".length));
      expect((await getRun(forked)).run.id).toBe(forked);
      await c.page.getByRole("heading", { name: new RegExp(`Run ${forked}`) }).waitFor();
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("renders an agent's conversation: its tool call with arguments and result, token usage, the model that answered; markup as text", async () => {
    await start("console-agent", "what is the weather?", "agent-1");
    await settled("agent-1");
    const c = await openConsole(browser, server, { path: "/runs/agent-1" });
    try {
      const conv = c.page.locator(".conversation");
      await conv.waitFor();
      const call = conv.locator('[data-tool-call="call_0_0"]');
      await call.getByText("lookup").first().waitFor();
      await call.getByText('"q": "weather"').waitFor();
      await call.getByText(`looked up weather: ${MARKUP}`).waitFor();
      await conv.getByText(`Found it: ${MARKUP}`).waitFor();
      await conv.getByText("tokens: 11 in, 7 out · tool-calls").waitFor();
      await conv.getByText("answered by console-provider:console-model").first().waitFor();
      expect(await c.page.locator("img").count()).toBe(0);
      expect(await c.page.locator("main script").count()).toBe(0);
      expect(await c.page.evaluate("window.__pwned")).toBeUndefined();
      await c.page.locator(".run-logs").getByText("run.completed").waitFor({ timeout: 15_000 });
      await c.shot("run-agent");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
    // At a phone's width the page stays within the screen (wide tables scroll in their own box).
    const phone = await openConsole(browser, server, { path: "/runs/agent-1", width: 390 });
    try {
      await phone.page.locator(".conversation").waitFor();
      expect(Number(await phone.page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
      await phone.shot("run-phone");
      // A run that does not exist says so, with the server's code.
      await phone.page.goto(`${server.url}/runs/no-such-run`);
      await phone.page.getByText("Refused (404 STEAD_RUN_NOT_FOUND)").waitFor();
      expect(phone.errors.filter((e) => !/404/.test(e))).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
