/**
 * The approvals inbox and the holds page in real Chromium against a real `stead serve --worker` on
 * 127.0.0.1: an agent's tool call approved with arguments edited in the form generated from the
 * tool's schema (the tool's side-effect log shows what ran), an invalid edit stopped by the page
 * and one refused by the server (shown at its field; the wait stays open in the store), a workflow
 * approval arriving live and denied, an ambiguous-effect hold (a worker SIGKILLed after the
 * effect's intent) released with a supplied result the run goes on with, a viewer offered no
 * action, and markup the model wrote shown as text.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT, spawnCli, until, type CliProcess } from "./cli-helpers.js";
import { launchBrowser, openConsole, operatorCall, serveConsole, type ConsoleServer } from "./helpers/console.js";

const INBOX = join(ROOT, "test", "fixtures", "console", "inbox.ts");
const HOLDS = join(ROOT, "test", "fixtures", "console", "holds.ts");
const MARKUP = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

let browser: Browser;
let server: ConsoleServer;
const workers: CliProcess[] = [];

const api = <T>(method: string, path: string, body?: unknown): Promise<T> => operatorCall<T>(server, method, path, body);

interface RunJson {
  run: { id: string; status: string; output: unknown };
  waits: { name: string; kind: string; status: string; result: unknown }[];
  holds: { kind: string; status: string; choice: string | null }[];
}

const start = (definition: string, input: unknown, id: string) => api<{ id: string }>("POST", "/runs", { definition, input, id });
const getRun = (id: string) => api<RunJson>("GET", `/runs/${encodeURIComponent(id)}`);
const settled = (id: string, status = "completed") => until(`run ${id} to be ${status}`, async () => ((await getRun(id)).run.status === status ? true : undefined), 30_000);

/** The store's wait rows of a run, read from the SQLite file (read-only). */
function waitRows(runId: string): { name: string; status: string }[] {
  const db = new Database(join(server.dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT name, status FROM waits WHERE run_id = ?").all(runId) as { name: string; status: string }[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [INBOX] })]);
}, 90_000);

afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGTERM");
  await Promise.all([browser?.close(), server?.stop(), ...workers.map((w) => w.done.catch(() => undefined))]);
});

describe("the approvals inbox", () => {
  it("approves an agent's tool call with edited arguments: the page stops an invalid edit, the server refuses one at its field, the tool runs with the edit", async () => {
    await start("inbox-agent", "record alpha", "agent-1");
    const approval = await until("the tool's approval", async () => (await getRun("agent-1")).waits.find((w) => w.kind === "approval" && w.status === "open"), 30_000);
    const log = join(server.dir, "side-effects.log");
    const c = await openConsole(browser, server, { path: "/inbox" });
    try {
      const card = c.page.locator(`[data-approval="agent-1/${approval.name}"]`);
      await card.getByRole("heading", { name: "Tool call record" }).waitFor();
      // The agent's reason, as text: no element made of it.
      await card.getByText(`I need to record this first. ${MARKUP}`).waitFor();
      expect(await c.page.locator("img").count()).toBe(0);
      expect(await c.page.locator("main script").count()).toBe(0);
      expect(await c.page.evaluate("window.__pwned")).toBeUndefined();
      await card.getByText('"name": "alpha"').waitFor();

      await card.getByRole("button", { name: "Edit arguments" }).click();
      // A field of the form: its input and what is said next to it.
      const field = (label: string) => card.locator(".schema-field").filter({ has: c.page.getByLabel(label, { exact: true }) });
      const count = card.getByLabel("count", { exact: true });
      expect(await count.inputValue()).toBe("2");
      // The page's checks: a required field emptied, then a number past its maximum. Nothing is sent.
      await count.fill("");
      await card.getByRole("button", { name: "Approve with these arguments" }).click();
      await field("count").getByText("is required").waitFor();
      await count.fill("11");
      await card.getByRole("button", { name: "Approve with these arguments" }).click();
      await field("count").getByText("must be 10 or less").waitFor();
      expect(await count.getAttribute("aria-invalid")).toBe("true");
      // The server's check: a pattern the page does not check, refused and shown at its field.
      await count.fill("5");
      const name = card.getByLabel("name", { exact: true });
      await name.fill("Not Valid");
      await card.getByRole("button", { name: "Approve with these arguments" }).click();
      await card.getByText("Refused (422 STEAD_SCHEMA_MISMATCH)").waitFor();
      await field("name").getByText(/must match pattern/).waitFor();
      await c.shot("inbox-invalid-edit");
      expect(waitRows("agent-1").find((w) => w.name === approval.name)?.status).toBe("open");
      expect((await getRun("agent-1")).run.status).toBe("waiting");
      expect(existsSync(log)).toBe(false);

      // A valid edit: every kind of field the form generated.
      await name.fill("beta");
      await card.getByLabel("mode", { exact: true }).selectOption({ label: "slow" });
      await card.getByRole("button", { name: "Add to tags" }).click();
      await card.getByLabel("tags 2", { exact: true }).fill("b");
      await card.getByLabel("dry", { exact: true }).uncheck();
      await card.getByLabel("note (optional)", { exact: true }).fill("by hand");
      await card.getByRole("button", { name: "Approve with these arguments" }).click();
      await settled("agent-1");
      expect(readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as unknown)).toEqual([{ name: "beta", count: 5, mode: "slow", tags: ["a", "b"], opts: { dry: false, note: "by hand" } }]);
      const decided = (await getRun("agent-1")).waits.find((w) => w.name === approval.name);
      expect(decided).toMatchObject({ status: "resolved", result: { approved: true, scope: "once", input: { name: "beta", count: 5 } } });
      // Decided, it leaves the inbox without a reload.
      await card.waitFor({ state: "detached", timeout: 15_000 });

      // Approved for the rest of the run, unedited: the call runs as the model wrote it.
      await start("inbox-agent", "record alpha again", "agent-2");
      const next = c.page.locator('[data-approval^="agent-2/"]');
      // Its context (the agent's reason, the last steps) loads in above the form: pressed before, a click can land where the radio was.
      await next.locator(".recent-steps").waitFor({ state: "attached" });
      await next.getByLabel(/every call of/).check();
      await next.getByRole("button", { name: "Approve", exact: true }).click();
      await settled("agent-2");
      expect((await getRun("agent-2")).waits.find((w) => w.kind === "approval")?.result).toMatchObject({ approved: true, scope: "run" });
      expect(JSON.parse(readFileSync(log, "utf8").trim().split("\n")[1]!)).toEqual({ name: "alpha", count: 2, mode: "fast", tags: ["a"], opts: { dry: true } });
      expect(c.errors.filter((e) => !/status of 422/.test(e))).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("lists a workflow's approval as it opens; a viewer sees no buttons; an operator denies it with a reason from its own page (at a phone's width)", async () => {
    const op = await openConsole(browser, server, { path: "/inbox" });
    try {
      await op.page.getByRole("heading", { name: /^Approvals/ }).waitFor();
      await start("inbox-workflow", { item: "box" }, "wf-1");
      const card = op.page.locator('[data-approval="wf-1/ship"]');
      await card.getByRole("heading", { name: "Approval ship" }).waitFor({ timeout: 15_000 });
      await card.getByText('"item": "box"').waitFor();
      await card.getByText("What the run did before").click();
      await card.getByRole("link", { name: "prepare" }).waitFor();
      // A workflow's approval has no arguments to edit and no scope.
      expect(await card.getByRole("button", { name: "Edit arguments" }).count()).toBe(0);
      await card.getByRole("button", { name: "Approve" }).waitFor();
      await op.shot("inbox");
      expect(op.errors).toEqual([]);
    } finally {
      await op.close();
    }

    const viewer = await openConsole(browser, server, { signIn: "viewer", path: "/inbox" });
    try {
      await viewer.page.locator('[data-approval="wf-1/ship"]').getByText('"item": "box"').waitFor();
      expect(await viewer.page.locator("main").getByRole("button", { name: /Approve|Deny|Edit arguments/ }).count()).toBe(0);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }

    const phone = await openConsole(browser, server, { path: "/inbox/wf-1/ship", width: 390 });
    try {
      await phone.page.getByRole("heading", { name: "Approval ship" }).waitFor();
      expect(Number(await phone.page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
      await phone.shot("inbox-phone");
      await phone.page.getByLabel(/^Reason/).fill("not today");
      await phone.page.getByRole("button", { name: "Deny" }).click();
      await settled("wf-1");
      expect((await getRun("wf-1")).run.output).toBe("kept box");
      expect((await getRun("wf-1")).waits.find((w) => w.name === "ship")?.result).toMatchObject({ approved: false, reason: "not today" });
      await phone.page.getByRole("heading", { name: "ship is decided" }).waitFor({ timeout: 15_000 });
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});

describe("the holds page", () => {
  it("releases an ambiguous-effect hold with a supplied result (JSON checked before it is sent); the run goes on with it; a viewer sees no choices", async () => {
    const started = await cli(["run", HOLDS, "--input", JSON.stringify({ amount: 7 }), "--id", "charge-1", "--detach"], server.dir);
    expect(started.code).toBe(0);
    // The first worker dies (SIGKILL) right after the effect's intent is committed; the next one holds the run.
    const doomed = spawnCli(["worker", HOLDS, "--lease", "1s", "--poll", "100"], server.dir, { env: { STEAD_CRASH_AT: "after-intent:charge" } });
    workers.push(doomed);
    const died = await doomed.done;
    expect(died.signal).toBe("SIGKILL");
    workers.push(spawnCli(["worker", HOLDS, "--lease", "1s", "--poll", "100"], server.dir, { timeoutMs: 120_000 }));
    await until("the ambiguous-effect hold", async () => ((await getRun("charge-1")).holds.some((h) => h.kind === "ambiguous_effect" && h.status === "open") ? true : undefined), 30_000);

    const viewer = await openConsole(browser, server, { signIn: "viewer", path: "/holds" });
    try {
      await viewer.page.locator(".hold").getByText("ambiguous_effect").waitFor();
      expect(await viewer.page.locator("main").getByRole("button").count()).toBe(0);
      expect(viewer.errors).toEqual([]);
    } finally {
      await viewer.close();
    }

    // One hold at its own address, at a phone's width.
    const id = (await api<{ holds: { id: number; runId: string }[] }>("GET", "/holds")).holds.find((x) => x.runId === "charge-1")?.id;
    const phone = await openConsole(browser, server, { path: `/holds/${String(id)}`, width: 390 });
    try {
      await phone.page.getByRole("button", { name: "Supply the result" }).waitFor();
      expect(Number(await phone.page.evaluate("document.documentElement.scrollWidth"))).toBeLessThanOrEqual(390);
      await phone.shot("holds-phone");
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.close();
    }

    const c = await openConsole(browser, server, { path: "/holds" });
    try {
      const card = c.page.locator(".hold", { hasText: "charge-1" });
      await card.getByRole("heading", { name: "ambiguous_effect on run charge-1" }).waitFor();
      await card.getByRole("link", { name: "charge", exact: true }).waitFor();
      // The choices the engine offers for this kind, and no other.
      await card.getByRole("button", { name: "Supply the result" }).waitFor();
      expect(await card.getByRole("button").allTextContents()).toEqual(["Retry", "Skip", "Supply the result"]);
      await c.shot("holds");
      const result = card.getByLabel("The step's result (JSON)");
      await result.fill('{"receipt": ');
      await card.getByRole("button", { name: "Supply the result" }).click();
      await card.getByText(/not JSON: .*nothing was sent/).waitFor();
      expect((await getRun("charge-1")).holds.find((h) => h.kind === "ambiguous_effect")?.status).toBe("open");
      await result.fill('{"receipt": "manual-7"}');
      await card.getByRole("button", { name: "Supply the result" }).click();
      await settled("charge-1");
      expect((await getRun("charge-1")).run.output).toBe('used {"receipt":"manual-7"}');
      expect((await getRun("charge-1")).holds.find((h) => h.kind === "ambiguous_effect")).toMatchObject({ status: "released", choice: "result" });
      await c.page.getByText("No run is on hold.").waitFor({ timeout: 15_000 });
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
