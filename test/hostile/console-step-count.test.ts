/**
 * Review 2 (item 11): the console counted one step as "1 steps": a run's page ("Journal: 1
 * steps") and an approval's card in the inbox ("last 1 of 1 steps"). Counted in real Chromium
 * against a real `stead serve` on 127.0.0.1 over runs of one and of two journal entries.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { requireBuild } from "../cli-helpers.js";
import { launchBrowser, openConsole, serveConsole, type ConsolePage, type ConsoleServer } from "../helpers/console.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";

const steps = workflow("count-steps", async (ctx, n: number) => {
  for (let i = 1; i <= n; i++) await ctx.step(`s${i}`, () => i);
  return n;
});
/** Parks at its first journal entry, an approval. */
const asks = workflow("count-asks", async (ctx) => (await ctx.approval("go", { ask: "go?" })).approved);

let browser: Browser;
let server: ConsoleServer;
const dir = tempDir("stead-step-count-");

beforeAll(async () => {
  requireBuild();
  const stead = createStead({ store: join(dir.dir, ".stead", "stead.db") });
  try {
    const w = stead.worker({ definitions: [steps, asks], ...FAST_WORKER });
    w.start();
    try {
      await stead.runs.start(steps, 1, { id: "one-step" });
      await stead.runs.start(steps, 2, { id: "two-steps" });
      await stead.runs.start(asks, null, { id: "asks-first" });
      for (const id of ["one-step", "two-steps"]) await stead.runs.waitFor(id, { timeoutMs: 30_000 });
      await stead.runs.waitFor("asks-first", { until: (r) => r.status === "waiting", timeoutMs: 30_000 });
    } finally {
      await w.stop({ graceMs: 500 });
    }
  } finally {
    await stead.close();
  }
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ dir: dir.dir })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
  dir.remove();
});

/** The text of the facts entry named `term` on a run's page. */
const fact = (c: ConsolePage, term: string) =>
  c.page.evaluate<string | null>(`(() => { const dt = [...document.querySelectorAll("dl.facts dt")].find((d) => d.textContent === ${JSON.stringify(term)}); return dt?.nextElementSibling?.textContent ?? null; })()`);

describe("step counts in the console", () => {
  it.each([
    ["one-step", "1 step"],
    ["two-steps", "2 steps"],
  ])("the page of run %s says its journal holds %s", async (id, said) => {
    const c = await openConsole(browser, server, { path: `/runs/${id}` });
    try {
      await c.page.locator("dl.facts").waitFor();
      await c.page.locator("tr[data-step]").first().waitFor();
      expect(await fact(c, "Journal")).toBe(said);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("an approval's card in the inbox says the last 1 of 1 step", async () => {
    const c = await openConsole(browser, server, { path: "/inbox" });
    try {
      // The count is shown once the card has read its run's journal.
      const summary = c.page.locator('[data-approval="asks-first/go"] details.recent summary', { hasText: "(last" });
      await summary.waitFor();
      expect(await summary.innerText()).toBe("What the run did before (last 1 of 1 step)");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
