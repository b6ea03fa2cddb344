/**
 * Issue 39, item 18: a run started without a workspace has no files to show, so its journal
 * links no step to any (its "files" links led to an empty page); a run with one links each step
 * to its files. In real Chromium against a real `stead serve --worker` on 127.0.0.1 (SQLite:
 * the page does not depend on the store); whether a run has a workspace is read from the API the
 * page reads it from, and the page is checked again once it says what it read.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT, until } from "../cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsoleServer } from "../helpers/console.js";

const RUNS = join(ROOT, "test", "fixtures", "console", "runs.ts");
const FILES = join(ROOT, "test", "fixtures", "console", "sessions.ts");

let browser: Browser;
let server: ConsoleServer;

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [RUNS] })]);
  await api("POST", "/runs", { definition: "console-quick", input: { n: 1 }, id: "no-ws" });
  await until("no-ws to complete", async () => ((await api<{ run: { status: string } }>("GET", "/runs/no-ws")).run.status === "completed" ? true : undefined), 30_000);
  const ws = join(server.dir, "repo");
  mkdirSync(ws);
  const ran = await cli(["run", FILES, "--workflow", "console-files", "--input", JSON.stringify(ws), "--workspace", ws, "--id", "with-ws"], server.dir, { timeoutMs: 60_000 });
  if (ran.code !== 0) throw new Error(`stead run exited ${ran.code}: ${ran.stdout} ${ran.stderr}`);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("a step's files link", () => {
  it("is not shown for a run that has no workspace, and is for each step of a run that has one", async () => {
    expect(await api("GET", "/runs/no-ws/snapshots")).toMatchObject({ workspace: null, snapshots: [] });
    expect((await api<{ workspace: string | null }>("GET", "/runs/with-ws/snapshots")).workspace).toBe(join(server.dir, "repo"));

    const c = await openConsole(browser, server, { path: "/runs/no-ws" });
    try {
      const files = c.page.locator(".journal").getByRole("link", { name: "files" });
      await c.page.locator('tr[data-step="only"]').waitFor();
      expect(await files.count()).toBe(0);
      // Once the page knows the run has no workspace (it says so), still no step links to files.
      await c.page.locator(".run-workspace").getByText("none: the run was started without one").waitFor();
      expect(await files.count()).toBe(0);
      expect(await c.page.locator(".journal th").allInnerTexts()).not.toContain("Workspace");

      await c.page.goto(`${server.url}/runs/with-ws`);
      await c.page.locator(".run-workspace").getByText(join(server.dir, "repo")).waitFor();
      await c.page.locator('tr[data-step="seed"]').getByRole("link", { name: "files" }).waitFor();
      expect(await c.page.locator(".journal").getByRole("link", { name: "files" }).count()).toBe(3);
      await c.page.locator('tr[data-step="edit"]').getByRole("link", { name: "files" }).click();
      await c.page.waitForURL(`${server.url}/runs/with-ws/workspace?at=edit`);
      await c.page.locator(".ws-tree").getByRole("link", { name: "page.html", exact: true }).waitFor();
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
