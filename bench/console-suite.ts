/**
 * The console's run page in real headless Chromium (Debian's `chromium`, through playwright-core)
 * against `stead serve` over an SQLite store: ms from navigation to the journal's first page
 * rendered, for a run of 10,000 steps against the same page for a run of 10 (same server, same
 * browser, back to back). The page renders 100 journal rows whatever the run's length, so the
 * ratio says whether its cost follows the page or the journal.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { stead as lib } from "./lib.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { serveCli } from "./serve-cli.js";
import { inScratch } from "./temp-dir.js";

const BIG = 10_000;
const SMALL = 10;
const PAIRS = 7;
const TARGET = 2;
const CHROMIUM = process.env.STEAD_TEST_CHROMIUM ?? "/usr/bin/chromium";

const steps = lib.workflow("bench-console", async (ctx, input: { steps: number }) => {
  for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, () => i);
  return input.steps;
});


/** ms from navigation to the run's first journal page in the DOM (100 rows, or all of a short run). */
async function pageLoad(browser: Browser, url: string, runId: string, rows: number): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(`${url}/runs/${runId}`);
    await page.locator(`table.journal tbody tr:nth-child(${rows})`).waitFor({ timeout: 60_000 });
    const ms = performance.now() - t0;
    const shown = await page.locator("table.journal tbody tr").count();
    if (shown !== rows) throw new Error(`run ${runId}'s page shows ${shown} journal rows, not ${rows}`);
    return ms;
  } finally {
    await context.close();
  }
}

export async function consoleSuite(): Promise<void> {
  console.log("Console (the run page in headless Chromium, SQLite store)");
  if (!existsSync(CHROMIUM) || !existsSync(resolve(import.meta.dirname, "../dist/console/index.html"))) {
    printTable([{ name: `run page, ${fmt(BIG)} steps / ${SMALL}`, value: "n/a", target: `≤ ${fmt(TARGET, 2)}x`, pass: null, note: `no Chromium at ${CHROMIUM} or no built console` }]);
    return;
  }
  await inScratch("console", async (dir) => {
    const store = join(dir, "stead.db");
    const stead = lib.createStead({ store });
    try {
      await stead.run(steps, { steps: BIG }, { id: "big" });
      await stead.run(steps, { steps: SMALL }, { id: "small" });
    } finally {
      await stead.close();
    }
    const served = await serveCli(store);
    const args = ["--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-dev-shm-usage", ...(process.getuid?.() === 0 ? ["--no-sandbox"] : [])];
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
    try {
      await pageLoad(browser, served.url, "small", SMALL);
      await pageLoad(browser, served.url, "big", 100);
      const big: number[] = [];
      const small: number[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < PAIRS; i++) {
        const s = await pageLoad(browser, served.url, "small", SMALL);
        const b = await pageLoad(browser, served.url, "big", 100);
        small.push(s);
        big.push(b);
        ratios.push(b / s);
      }
      const ratio = median(ratios);
      const rows: Row[] = [
        { name: `run page, ${SMALL} steps`, value: `${fmt(median(small))} ms`, target: "", pass: null, ...(noisy(small) ? { note: noisy(small)! } : {}) },
        { name: `run page, ${fmt(BIG)} steps`, value: `${fmt(median(big))} ms`, target: "", pass: null, ...(noisy(big) ? { note: noisy(big)! } : {}) },
        { name: `  run page, ${fmt(BIG)} steps / ${SMALL}`, value: `${fmt(ratio, 2)}x`, target: `≤ ${fmt(TARGET, 2)}x`, pass: ratio <= TARGET, ...(noisy(ratios) ? { note: noisy(ratios)! } : {}) },
      ];
      printTable(rows);
    } finally {
      await browser.close();
      served.child.kill("SIGTERM");
    }
  });
}
