/**
 * The sessions, workspace and definitions pages in real Chromium against a real `stead serve
 * --worker` on 127.0.0.1: a message sent from a session's page and its answer streaming in
 * (a partial text shown before the whole one), the diff of a run's workspace between two steps
 * line by line, a file's content at a step, the definitions and the live worker, and markup a
 * user, a model or a run's file holds shown as text.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT, until } from "./cli-helpers.js";
import { launchBrowser, openConsole, roleToken, serveConsole, type ConsoleServer } from "./helpers/console.js";

const FIXTURE = join(ROOT, "test", "fixtures", "console", "sessions.ts");
const MARKUP = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
const WORDS = Array.from({ length: 24 }, (_, i) => `word${i + 1}`).join(" ");
/** As the fixture answers: a message that says "long" gets its words four times. */
const answerTo = (text: string) => `You said: ${text} — ${text.includes("long") ? Array(4).fill(WORDS).join(" ") : WORDS} end.`;

let browser: Browser;
let server: ConsoleServer;

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${await roleToken(server, "operator")}` } });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

interface Turns {
  turns: { id: string; turn: number; status: string; input: unknown; output: unknown }[];
}

/** The store's rows of a session's turns, read as the world wrote them. */
function storeTurns(sessionId: string): { turn: number; status: string; input: string }[] {
  const db = new Database(join(server.dir, ".stead", "stead.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT turn, status, input FROM runs WHERE session_id = ? ORDER BY turn").all(sessionId) as { turn: number; status: string; input: string }[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  requireBuild();
  [browser, server] = await Promise.all([launchBrowser(), serveConsole({ worker: [FIXTURE] })]);
  // A session is started where its agent's code is; the server's worker runs its turns.
  const sent = await cli(["send", "chat-1", "hello there", "--agent", FIXTURE, "--name", "console-chat"], server.dir, { timeoutMs: 60_000 });
  if (sent.code !== 0) throw new Error(`stead send: ${sent.stderr}`);
  const ws = join(server.dir, "repo");
  mkdirSync(ws);
  const ran = await cli(["run", FIXTURE, "--workflow", "console-files", "--input", JSON.stringify(ws), "--workspace", ws, "--id", "ws-1"], server.dir, { timeoutMs: 60_000 });
  if (ran.code !== 0) throw new Error(`stead run exited ${ran.code}: ${ran.stdout} ${ran.stderr}`);
  await until("turn 1 to complete", async () => ((await api<Turns>("/sessions/chat-1")).turns[0]?.status === "completed" ? true : undefined), 30_000);
}, 120_000);

afterAll(async () => {
  await Promise.all([browser?.close(), server?.stop()]);
});

describe("a session", () => {
  it("sends a message from the page and streams the answer in, markup as text", async () => {
    const c = await openConsole(browser, server, { path: "/sessions" });
    try {
      await c.page.getByRole("link", { name: "chat-1" }).click();
      const first = c.page.locator('section.turn[data-turn="1"]');
      await first.getByText(answerTo("hello there")).waitFor({ timeout: 15_000 });
      const message = `please ${MARKUP}`;
      const full = answerTo(message);
      await c.page.getByLabel("Message").fill(message);
      // What the page shows of turn 2's answer, sampled while it streams.
      await c.page.evaluate(`window.__seen = []; window.__sampler = setInterval(() => {
        const a = [...document.querySelectorAll('section.turn[data-turn="2"] .answer pre')].pop();
        if (a) window.__seen.push(a.textContent);
      }, 20)`);
      await c.page.getByRole("button", { name: "Send" }).click();
      await c.page.getByRole("status").getByText("Queued as turn 2").waitFor({ timeout: 10_000 });
      const second = c.page.locator('section.turn[data-turn="2"]');
      await second.locator(".answer pre").getByText(full, { exact: true }).waitFor({ timeout: 20_000 });
      const seen = await c.page.evaluate<string[]>("clearInterval(window.__sampler), window.__seen");
      const partial = seen.filter((s) => s !== "" && s !== full && full.startsWith(s));
      expect(partial.length).toBeGreaterThan(0);
      // Never anything but a prefix of the answer: no text repeated, none out of order.
      expect(seen.every((s) => full.startsWith(s))).toBe(true);
      await second.getByText("completed").waitFor({ timeout: 15_000 });
      await second.locator(".answer pre").getByText(full, { exact: true }).waitFor({ timeout: 5_000 });
      // The user's markup and the model's echo of it are text; no element was made of them.
      await second.locator(".msg.user pre").getByText(message, { exact: true }).waitFor();
      expect(await c.page.locator("img").count()).toBe(0);
      expect(await c.page.evaluate("window.__pwned")).toBeUndefined();
      // The world: the store holds turn 2 with that message, completed; the API answers its text.
      expect(storeTurns("chat-1").map((t) => [t.turn, t.status, JSON.parse(t.input) as unknown])).toEqual([
        [1, "completed", "hello there"],
        [2, "completed", message],
      ]);
      expect((await api<Turns>("/sessions/chat-1")).turns[1]?.output).toMatchObject({ text: full });
      await c.shot("session-chat");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 40_000);

  it("shows a turn queued behind a running one, and a running turn's text so far to a page opened mid-answer", async () => {
    const token = await roleToken(server, "operator");
    const send = async (text: string) => {
      const res = await fetch(`${server.url}/api/v1/sessions/chat-1/messages`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ text }) });
      expect(res.status).toBeLessThan(300);
      return (await res.json()) as { turn: number };
    };
    expect((await send("third, long")).turn).toBe(3);
    expect((await send("fourth")).turn).toBe(4);
    // Opened once turn 3 has written some of its answer: what it wrote so far is shown.
    await until("turn 3's first live text", async () => ((await api<{ events: { type: string }[] }>(`/runs/${(await api<Turns>("/sessions/chat-1")).turns[2]!.id}/events`)).events.some((e) => e.type === "model.delta") ? true : undefined), 15_000);
    const c = await openConsole(browser, server, { signIn: "viewer", path: "/sessions/chat-1" });
    try {
      const third = c.page.locator('section.turn[data-turn="3"]');
      const fourth = c.page.locator('section.turn[data-turn="4"]');
      await fourth.getByText("queued: runs once the turns before it end").waitFor({ timeout: 10_000 });
      const partial = await third.locator('[data-live="true"] .answer pre').textContent({ timeout: 10_000 });
      expect(partial).not.toBe("");
      expect(answerTo("third, long").startsWith(partial ?? "?") && partial !== answerTo("third, long")).toBe(true);
      await c.shot("session-queued");
      writeFileSync(join(server.dir, "release-long"), "");
      await fourth.locator(".answer pre").getByText(answerTo("fourth"), { exact: true }).waitFor({ timeout: 30_000 });
      await third.locator(".answer pre").getByText(answerTo("third, long"), { exact: true }).waitFor();
      expect(storeTurns("chat-1").slice(2).map((t) => [t.turn, t.status])).toEqual([
        [3, "completed"],
        [4, "completed"],
      ]);
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 60_000);

  it("shows a viewer no send form; the sessions list links each session", async () => {
    const c = await openConsole(browser, server, { signIn: "viewer", path: "/sessions/chat-1" });
    try {
      await c.page.locator('section.turn[data-turn="1"]').getByText(answerTo("hello there")).waitFor({ timeout: 15_000 });
      expect(await c.page.getByLabel("Message").count()).toBe(0);
      expect(await c.page.getByRole("button", { name: "Send" }).count()).toBe(0);
      await c.page.getByRole("link", { name: "Sessions" }).first().click();
      await c.page.locator('tr[data-session="chat-1"]').getByRole("link", { name: "chat-1" }).waitFor();
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("stays usable at phone width: nothing wider than the screen", async () => {
    const wide = "document.documentElement.scrollWidth <= document.documentElement.clientWidth";
    const pages: [string, string][] = [
      ["/sessions/chat-1", "section.turn .answer"],
      ["/runs/ws-1/workspace?from=seed&to=edit&at=edit&file=page.html", '.ws-file[data-path="notes.txt"] [data-kind="add"]'],
      ["/definitions", "table.workers td"],
    ];
    for (const [path, shown] of pages) {
      const c = await openConsole(browser, server, { path, width: 390 });
      try {
        await c.page.locator(shown).first().waitFor({ timeout: 15_000 });
        expect(await c.page.evaluate(wide), path).toBe(true);
        expect(c.errors).toEqual([]);
      } finally {
        await c.close();
      }
    }
  });
});

describe("a run's workspace", () => {
  it("shows the diff between two steps line by line, a file's content at a step, binary as such", async () => {
    const c = await openConsole(browser, server, { path: "/runs/ws-1/workspace" });
    try {
      await c.page.locator('table.snapshots tr[data-step="edit"]').waitFor({ timeout: 15_000 });
      await c.page.getByLabel("From").selectOption("seed");
      await c.page.getByLabel("To").selectOption("edit");
      await c.page.getByRole("button", { name: "Compare" }).click();
      const notes = c.page.locator('.ws-file[data-path="notes.txt"]');
      await notes.locator('[data-kind="add"]').first().waitFor({ timeout: 10_000 });
      expect(new URL(c.page.url()).searchParams.get("from")).toBe("seed");
      expect(new URL(c.page.url()).searchParams.get("to")).toBe("edit");
      expect(await notes.locator('[data-kind="del"]').allTextContents()).toEqual(["- bravo"]);
      expect(await notes.locator('[data-kind="add"]').allTextContents()).toEqual(["+ BRAVO changed", "+ echo added"]);
      // What the server's diff says changed, the page shows.
      expect(await api("/runs/ws-1/diff?from=seed&to=edit")).toEqual({ added: ["blob.bin", "page.html"], changed: ["notes.txt"], removed: [] });
      const page = c.page.locator('.ws-file[data-path="page.html"]');
      expect(await page.locator('[data-kind="add"]').allTextContents()).toEqual(["+ <h1>title</h1>", `+ ${MARKUP}`]);
      await c.page.locator('.ws-file[data-path="blob.bin"]').getByText(/binary file/).waitFor();
      expect(await c.page.locator("img").count()).toBe(0);
      expect(await c.page.locator("main h1").count()).toBe(1);
      await c.shot("workspace-diff");

      // A file at the earlier step, from the tree of that step.
      await c.page.locator('table.snapshots tr[data-step="seed"]').getByRole("link", { name: "seed" }).click();
      await c.page.locator(".ws-tree").getByRole("link", { name: "notes.txt" }).click();
      const view = c.page.locator(".ws-file-view");
      await view.locator("pre").getByText("alpha\nbravo\ncharlie\ndelta\n", { exact: true }).waitFor({ timeout: 10_000 });
      expect(new URL(c.page.url()).searchParams.get("file")).toBe("notes.txt");
      // The markup file at the later step: text, no element.
      await c.page.goto(`${server.url}/runs/ws-1/workspace?at=edit&file=page.html`);
      await c.page.locator(".ws-file-view pre").getByText(`<h1>title</h1>\n${MARKUP}\n`, { exact: true }).waitFor({ timeout: 10_000 });
      expect(await c.page.locator("img").count()).toBe(0);
      expect(await c.page.evaluate("window.__pwned")).toBeUndefined();
      await c.page.goto(`${server.url}/runs/ws-1/workspace?at=edit&file=blob.bin`);
      await c.page.locator(".ws-file-view").getByText("A binary file (6 bytes): not shown.").waitFor({ timeout: 10_000 });
      // The tarball link downloads the snapshot.
      const href = await c.page.locator('table.snapshots tr[data-step="edit"] a[download]').getAttribute("href");
      const tar = await c.page.request.get(`${server.url}${href}`);
      expect(tar.status()).toBe(200);
      expect(tar.headers()["content-type"]).toBe("application/gzip");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});

describe("definitions and workers", () => {
  it("lists what the worker serves and the worker itself", async () => {
    const workers = (await api<{ workers: { workerId: string; pid: number; definitions: { name: string }[] }[] }>("/workers")).workers;
    expect(workers.length).toBe(1);
    const c = await openConsole(browser, server, { signIn: "viewer", path: "/definitions" });
    try {
      for (const name of ["console-chat", "console-files"]) {
        const card = c.page.locator(`article.definition[data-definition="${name}"]`);
        await card.getByText("served", { exact: true }).waitFor({ timeout: 10_000 });
        await card.getByText(workers[0]!.workerId).waitFor();
      }
      await c.page.locator('article.definition[data-definition="console-chat"]').getByText("agent", { exact: true }).waitFor();
      const row = c.page.locator(`table.workers tr[data-worker="${workers[0]!.workerId}"]`);
      await row.getByText(String(workers[0]!.pid), { exact: true }).waitFor();
      await row.getByText("console-files").waitFor();
      // Each input schema as the API gives it: JSON as text, or said to be none.
      const defs = (await api<{ definitions: { name: string; inputSchema: unknown }[] }>("/definitions")).definitions;
      expect(defs.map((d) => d.name).sort()).toEqual(["console-chat", "console-files"]);
      for (const d of defs) {
        const card = c.page.locator(`article.definition[data-definition="${d.name}"]`);
        await card.locator("summary").click();
        if (d.inputSchema === null) await card.getByText("It declares none").waitFor();
        else await card.locator(".json pre").getByText(JSON.stringify(d.inputSchema, null, 2), { exact: true }).waitFor();
      }
      await c.shot("definitions");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
