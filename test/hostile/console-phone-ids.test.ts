/**
 * Issue 39, item 18: at a phone's width (375 px) a run's id, and a step's, is read on one line,
 * not cut into lines of two or three characters by a squeezed table column, and no page is wider
 * than the screen. Measured in real Chromium against a real `stead serve --worker` on 127.0.0.1
 * (SQLite: the layout does not depend on the store): the line boxes of each id's element
 * (`getClientRects()`: one per line it takes) on the runs list, a run's journal and the inbox.
 *
 * Review 2 (item 11): the holds page still broke a run id at its hyphen ("hold-phone-" on one
 * line, "width-run" on the next). There the lines are counted over the id's text itself (a
 * Range's rects), so no styling of its element can hide a break.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { requireBuild, ROOT, until } from "../cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsolePage, type ConsoleServer } from "../helpers/console.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";

const RUNS = join(ROOT, "test", "fixtures", "console", "runs.ts");
const INBOX = join(ROOT, "test", "fixtures", "console", "inbox.ts");
const PHONE = 375;

let browser: Browser;
let server: ConsoleServer;
const ids: string[] = [];
let agentRun = "";

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);
const statusOf = async (id: string) => (await api<{ run: { status: string } }>("GET", `/runs/${encodeURIComponent(id)}`)).run.status;

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [RUNS, INBOX] })]);
  // Ids as the store makes them (`run_` and 18 characters), and a run parked at an approval whose step ids are long.
  for (let n = 1; n <= 3; n++) ids.push((await api<{ id: string }>("POST", "/runs", { definition: "console-quick", input: { n } })).id);
  agentRun = (await api<{ id: string }>("POST", "/runs", { definition: "inbox-agent", input: "record alpha" })).id;
  for (const id of ids) await until(`${id} to complete`, async () => ((await statusOf(id)) === "completed" ? true : undefined), 30_000);
  await until(`${agentRun} to wait`, async () => ((await statusOf(agentRun)) === "waiting" ? true : undefined), 30_000);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

interface Box {
  text: string;
  lines: number;
  width: number;
}

/** Each element of `selector`: its text, how many line boxes it takes, and its width. */
const boxes = (c: ConsolePage, selector: string): Promise<Box[]> =>
  c.page.evaluate<Box[]>(`[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => ({ text: e.textContent ?? "", lines: e.getClientRects().length, width: e.getBoundingClientRect().width }))`);

const pageWidth = (c: ConsolePage) => c.page.evaluate<number>("document.documentElement.scrollWidth");

describe("run and step ids at a phone's width", () => {
  it("the runs list shows each run's id on one line, and is no wider than the screen", async () => {
    const c = await openConsole(browser, server, { path: "/runs", width: PHONE });
    try {
      for (const id of ids) await c.page.locator(`tr[data-run="${id}"]`).waitFor();
      const shown = await boxes(c, "tr[data-run] a code");
      expect(shown.map((b) => b.text).sort()).toEqual([...ids, agentRun].sort());
      for (const b of shown) {
        expect(b.lines, `run id ${b.text} takes ${b.lines} lines`).toBe(1);
        expect(b.width).toBeLessThanOrEqual(PHONE);
      }
      expect(await pageWidth(c)).toBeLessThanOrEqual(PHONE);
      await c.shot("phone-runs");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("a run's page shows its id and each step's id on one line, and is no wider than the screen", async () => {
    const c = await openConsole(browser, server, { path: `/runs/${encodeURIComponent(agentRun)}`, width: PHONE });
    try {
      await c.page.locator("tr[data-step]").nth(1).waitFor();
      const steps = await boxes(c, "tr[data-step] a code");
      expect(steps.map((b) => b.text)).toEqual(["model-1", "approve:call_0_0"]);
      for (const b of steps) expect(b.lines, `step id ${b.text} takes ${b.lines} lines`).toBe(1);
      const heading = await boxes(c, "#run-h code");
      expect(heading).toEqual([expect.objectContaining({ text: agentRun, lines: 1 })]);
      expect(await pageWidth(c)).toBeLessThanOrEqual(PHONE);
      await c.shot("phone-run");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("the inbox shows the waiting run's id on one line, and is no wider than the screen", async () => {
    const c = await openConsole(browser, server, { path: "/inbox", width: PHONE });
    try {
      const card = c.page.locator(`[data-approval^="${agentRun}/"]`);
      await card.getByRole("heading", { name: "Tool call record" }).waitFor();
      const run = await boxes(c, `[data-approval^="${agentRun}/"] p.muted a code`);
      expect(run).toEqual([expect.objectContaining({ text: agentRun, lines: 1 })]);
      expect(await pageWidth(c)).toBeLessThanOrEqual(PHONE);
      await c.shot("phone-inbox");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});

/** Each element of `selector`: its text, and how many lines its text takes (a Range's rects over the text, whatever the element's display). */
const textLines = (c: ConsolePage, selector: string): Promise<{ text: string; lines: number }[]> =>
  c.page.evaluate<{ text: string; lines: number }[]>(
    `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => { const r = document.createRange(); r.selectNodeContents(e); return { text: e.textContent ?? "", lines: new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size }; })`,
  );

const phoneGated = (version: string) =>
  workflow("phone-gated", { version }, async (ctx, n: number) => {
    await ctx.step("first", () => n);
    await ctx.approval("go", { n });
    return ctx.step("last", () => n);
  });

describe("hyphenated run ids on the holds page and the inbox at a phone's width", () => {
  const HELD = "hold-phone-width-run";
  const WAITING = "wait-phone-width-run";
  let holdServer: ConsoleServer | undefined;
  const dir = tempDir("stead-phone-holds-");

  beforeAll(async () => {
    // A run held definition_changed (approved, then claimed by a worker serving another version) and one waiting at its approval.
    const stead = createStead({ store: join(dir.dir, ".stead", "stead.db") });
    try {
      const w1 = stead.worker({ definitions: [phoneGated("1")], ...FAST_WORKER });
      w1.start();
      try {
        for (const [i, id] of [HELD, WAITING].entries()) await stead.runs.start(phoneGated("1"), i, { id });
        for (const id of [HELD, WAITING]) await stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 30_000 });
      } finally {
        await w1.stop({ graceMs: 500 });
      }
      await stead.runs.approve(HELD, "go");
      const w2 = stead.worker({ definitions: [phoneGated("2")], ...FAST_WORKER });
      w2.start();
      try {
        await stead.runs.waitFor(HELD, { until: (r) => r.status === "held", timeoutMs: 30_000 });
      } finally {
        await w2.stop({ graceMs: 500 });
      }
    } finally {
      await stead.close();
    }
    holdServer = await serveConsole({ dir: dir.dir });
  }, 120_000);

  afterAll(async () => {
    await holdServer?.stop();
    dir.remove();
  });

  it("the holds page shows the held run's id on one line, and is no wider than the screen", async () => {
    const c = await openConsole(browser, holdServer as ConsoleServer, { path: "/holds", width: PHONE });
    try {
      await c.page.locator("article[data-hold]").waitFor();
      const shown = await textLines(c, "article[data-hold] h2 a code");
      expect(shown).toEqual([{ text: HELD, lines: 1 }]);
      expect(await pageWidth(c)).toBeLessThanOrEqual(PHONE);
      await c.shot("phone-holds");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("the inbox shows the waiting run's hyphenated id on one line", async () => {
    const c = await openConsole(browser, holdServer as ConsoleServer, { path: "/inbox", width: PHONE });
    try {
      await c.page.locator(`[data-approval="${WAITING}/go"]`).waitFor();
      expect(await textLines(c, `[data-approval="${WAITING}/go"] p.muted a code`)).toEqual([{ text: WAITING, lines: 1 }]);
      expect(await pageWidth(c)).toBeLessThanOrEqual(PHONE);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
