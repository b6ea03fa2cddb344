/**
 * The HTTP API's session and workspace routes over real HTTP on 127.0.0.1, on both stores: a
 * session's turns and transcript, a message sent as its next turn (recorded as the token's name,
 * once per key), a run's snapshots, tree, one file's bytes with a content type no browser renders,
 * a diff, and a tarball extracted by the system's tar and compared with the directory on disk.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, lastUserText, scriptedModel, workflow } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { tempDir } from "./helpers/temp-store.js";
import { listTree } from "./helpers/workspace.js";

const chat = agent("api-chat", { model: scriptedModel({ respond: (prompt) => ({ text: `ANSWER to ${lastUserText(prompt)}` }) }), instructions: "Be brief." });

const LONG = `${"deep/".repeat(25)}name-${"x".repeat(40)}.txt`;
const binary = Buffer.from([0, 1, 2, 255, 254, 10]);
const files = workflow("api-files", async (ctx, root: string) => {
  await ctx.step("write", { effect: true }, () => {
    writeFileSync(join(root, "page.html"), "<script>alert(1)</script>\n");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "blob.bin"), binary);
    writeFileSync(join(root, "src", "héllo wörld.txt"), "grüße\n");
    mkdirSync(join(root, "empty"));
    mkdirSync(join(root, ...LONG.split("/").slice(0, -1)), { recursive: true });
    writeFileSync(join(root, ...LONG.split("/")), "long\n");
    symlinkSync("page.html", join(root, "link"));
  });
  return "ok";
});

describe.each(STORE_KINDS)("the HTTP API's session and workspace routes on %s", (kind) => {
  let served: Served;
  const dirs: (() => void)[] = [];
  beforeAll(async () => {
    served = await servedStore(kind, "server-routes");
  });
  afterAll(async () => {
    await served.close();
    for (const d of dirs) d();
  });
  const dir = () => {
    const d = tempDir("stead-routes-");
    dirs.push(d.remove);
    return d.dir;
  };

  const call = async (method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${served.server.url}/api/v1${path}`, { method, headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
    const bytes = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get("content-type") ?? "";
    return { status: res.status, headers: res.headers, type, bytes, body: type.includes("json") ? (JSON.parse(bytes.toString("utf8")) as Record<string, unknown>) : {} };
  };

  it("a session's turns and transcript; a message sent over HTTP is its next turn, by the token's name, once per key", async () => {
    const { stead } = served.s;
    await stead.session(chat, "support-1").send("hello");
    const post = () => call("POST", "/sessions/support-1/messages", { token: served.tokens.operator, body: { text: "and then?" }, headers: { "idempotency-key": "msg-1" } });
    const first = await post();
    expect(first).toMatchObject({ status: 200, body: { turn: 2, already: false } });
    expect(first.headers.get("idempotent-replayed")).toBe("false");
    const again = await post();
    expect(again).toMatchObject({ status: 200, body: { runId: first.body.runId, turn: 2, already: true } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");

    const rows = await served.s.rows("SELECT id, turn, definition, module FROM runs WHERE session_id = ? ORDER BY turn", "support-1");
    expect(rows.map((r) => [r.id === first.body.runId, Number(r.turn), r.definition])).toEqual([
      [false, 1, "api-chat"],
      [true, 2, "api-chat"],
    ]);
    expect(rows[1]?.module).toBe(rows[0]?.module);
    const [created] = await served.s.rows("SELECT data FROM events WHERE run_id = ? AND type = 'run.created'", first.body.runId);
    expect(JSON.parse(String(created?.data))).toMatchObject({ session: "support-1", by: "olivia" });
    expect(await served.s.rows("SELECT verb, key, actor FROM idempotency_keys WHERE scope = ?", "support-1")).toEqual([{ verb: "send", key: "msg-1", actor: "olivia" }]);

    const worker = stead.worker({ definitions: [chat], pollMs: 10 });
    worker.start();
    await stead.runs.waitFor(String(first.body.runId), { timeoutMs: 20_000 });
    await worker.stop();

    const session = await call("GET", "/sessions/support-1");
    expect(session.status).toBe(200);
    expect(session.body.session).toMatchObject({ id: "support-1", definition: "api-chat", turns: 2, open: 0 });
    expect((session.body.turns as { id: string; turn: number; status: string; outcome: string }[]).map((t) => [t.id, t.turn, t.status, t.outcome])).toEqual(rows.map((r) => [r.id, Number(r.turn), "completed", "completed"]));

    const transcript = await call("GET", "/sessions/support-1/transcript");
    expect(transcript.status).toBe(200);
    const turns = transcript.body.turns as { runId: string; entries: { type: string; text?: string }[] }[];
    expect(turns.map((t) => t.runId)).toEqual(rows.map((r) => r.id));
    expect(turns.map((t) => t.entries.find((e) => e.type === "model")?.text)).toEqual(["ANSWER to hello", "ANSWER to and then?"]);
  });

  it("refuses a message to a session with no turn yet, an empty one, and unknown sessions, changing nothing", async () => {
    await call("GET", "/runs", { token: served.tokens.operator });
    const before = await digestStore(served.s.stead.store);
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/sessions/nobody-yet/messages", { text: "hi" }, 404, "STEAD_SESSION_NOT_FOUND"],
      ["POST", "/sessions/support-1/messages", { text: "" }, 400, "STEAD_BAD_OPTION"],
      ["POST", "/sessions/support-1/messages", { text: "hi", by: "mallory" }, 400, "STEAD_BAD_OPTION"],
      ["GET", "/sessions/nobody-yet", undefined, 404, "STEAD_SESSION_NOT_FOUND"],
      ["GET", "/sessions/nobody-yet/transcript", undefined, 404, "STEAD_SESSION_NOT_FOUND"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const r = await call(method, path, { token: served.tokens.operator, ...(body === undefined ? {} : { body }) });
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status, code });
    }
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });

  it("a run's snapshots, tree, one file's bytes, a diff and a tarball, as the store and the disk have them", async () => {
    const workspace = join(dir(), "repo");
    mkdirSync(workspace);
    const run = await served.s.stead.run(files, workspace, { workspace, pollMs: 10 });
    expect(run.status).toBe("completed");
    const id = run.id;

    const snaps = await call("GET", `/runs/${id}/snapshots`);
    const rows = await served.s.rows("SELECT seq, step_id, source, root FROM snapshots WHERE run_id = ? ORDER BY id", id);
    expect(snaps.status).toBe(200);
    expect(snaps.body.workspace).toBe(workspace);
    expect((snaps.body.snapshots as { seq: number; stepId: string | null; source: string; root: string }[]).map((x) => [x.seq, x.stepId, x.source, x.root])).toEqual(rows.map((r) => [Number(r.seq), r.step_id, r.source, r.root]));

    const tree = await call("GET", `/runs/${id}/snapshots/write/tree`);
    expect(tree.status).toBe(200);
    expect((tree.body.files as { path: string; content: unknown }[]).map((f) => [f.path, f.content])).toEqual(
      [LONG, "link", "page.html", "src/blob.bin", "src/héllo wörld.txt"].sort().map((p) => [p, null]),
    );

    const html = await call("GET", `/runs/${id}/snapshots/write/file?path=page.html`);
    expect(html.status).toBe(200);
    expect(html.type).toBe("text/plain; charset=utf-8");
    expect(html.headers.get("x-content-type-options")).toBe("nosniff");
    expect(html.headers.get("content-security-policy")).toContain("sandbox");
    expect(html.bytes.toString("utf8")).toBe("<script>alert(1)</script>\n");

    const blob = await call("GET", `/runs/${id}/snapshots/write/file?path=${encodeURIComponent("src/blob.bin")}`);
    expect(blob.type).toBe("application/octet-stream");
    expect(blob.headers.get("content-disposition")).toMatch(/^attachment; filename="blob.bin"/);
    expect(blob.headers.get("x-content-type-options")).toBe("nosniff");
    expect(blob.bytes.equals(binary)).toBe(true);
    expect((await call("GET", `/runs/${id}/snapshots/write/file?path=${encodeURIComponent("src/héllo wörld.txt")}`)).bytes.toString("utf8")).toBe("grüße\n");

    const diff = await call("GET", `/runs/${id}/diff?from=start&to=write`);
    expect(diff).toMatchObject({ status: 200, body: { changed: [], removed: [] } });
    expect([...(diff.body.added as string[])].sort()).toEqual([LONG, "link", "page.html", "src/blob.bin", "src/héllo wörld.txt"].sort());

    const tarball = await call("GET", `/runs/${id}/snapshots/write/tarball`);
    expect(tarball.status).toBe(200);
    expect(tarball.type).toBe("application/gzip");
    expect(tarball.headers.get("content-disposition")).toMatch(/^attachment; filename=/);
    const out = dir();
    writeFileSync(join(out, "snap.tar.gz"), tarball.bytes);
    const names = execFileSync("tar", ["-tzf", join(out, "snap.tar.gz")], { encoding: "utf8" }).trim().split("\n");
    expect(names.every((n) => !n.startsWith("/") && !n.split("/").includes(".."))).toBe(true);
    mkdirSync(join(out, "x"));
    execFileSync("tar", ["-xzf", join(out, "snap.tar.gz"), "-C", join(out, "x")]);
    const extracted = listTree(join(out, "x"));
    const original = listTree(workspace);
    expect(extracted).toEqual(original);
    expect(extracted[LONG]).toBe(original[LONG]);
    expect(extracted.empty).toMatch(/^dir /);
    expect(extracted.link).toBe("link page.html");

    await call("GET", "/runs", { token: served.tokens.operator });
    const before = await digestStore(served.s.stead.store);
    const refusals: [string, number, string, string?][] = [
      [`/runs/${id}/snapshots/write/file?path=..%2Fetc%2Fpasswd`, 400, "STEAD_BAD_OPTION", "path"],
      [`/runs/${id}/snapshots/write/file?path=%2Fetc%2Fpasswd`, 400, "STEAD_BAD_OPTION", "path"],
      [`/runs/${id}/snapshots/write/file?path=src`, 404, "STEAD_FILE_NOT_FOUND", "path"],
      [`/runs/${id}/snapshots/write/file?path=link`, 404, "STEAD_FILE_NOT_FOUND", "path"],
      [`/runs/${id}/snapshots/write/file?path=nope.txt`, 404, "STEAD_FILE_NOT_FOUND", "path"],
      [`/runs/${id}/snapshots/write/file`, 400, "STEAD_BAD_OPTION", "query.path"],
      [`/runs/${id}/snapshots/nope/tree`, 404, "STEAD_SNAPSHOT_NOT_FOUND"],
      [`/runs/${id}/snapshots/nope/tarball`, 404, "STEAD_SNAPSHOT_NOT_FOUND"],
      [`/runs/${id}/diff?from=start`, 400, "STEAD_BAD_OPTION", "query.to"],
      [`/runs/no-such-run/snapshots`, 404, "STEAD_RUN_NOT_FOUND"],
    ];
    for (const [path, status, code, field] of refusals) {
      const r = await call("GET", path);
      expect({ path, status: r.status, type: r.type, code: r.body.code, field: r.body.field }).toEqual({ path, status, type: "application/problem+json", code, field });
    }
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });
});
