/**
 * Review 2 (item 8): the session listing opens each session's last turn's sealed error, and one
 * changed error fails the listing of every session: `stead sessions` exits 7, `stead.sessions()`
 * refuses. Expected as for the run listing: the other sessions listed, the damaged one marked.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, workflow } from "../../src/index.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";

const talk = workflow("hostile-talk", { version: "1" }, async (ctx, input: { text: string }) =>
  ctx.step("answer", () => {
    if (input.text === "fail") throw new Error("the turn failed on purpose");
    return `heard ${input.text}`;
  }),
);

describe("a tampered turn in the session listing (SQLite, encrypted)", () => {
  const key = randomBytes(32);
  const encryption = () => ({ key: localKey(key, "the test's key") });
  let dir: { dir: string; remove: () => void };
  let store = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-tampered-session-");
    store = join(dir.dir, "stead.db");
    const stead = createStead({ store, encryption: encryption() });
    const w = stead.worker({ definitions: [talk], ...FAST_WORKER });
    w.start();
    try {
      for (const id of ["s-a", "s-b", "s-c"]) {
        const { runId } = await stead.session(talk, id).send({ text: "fail" });
        await stead.waitFor(runId, { timeoutMs: 20_000 });
      }
    } finally {
      await w.stop({ graceMs: 500 });
      await stead.close();
    }
    const db = new Database(store);
    try {
      const row = db.prepare("SELECT id, error FROM runs WHERE session_id = 's-b'").get() as { id: string; error: string };
      expect(row.error.startsWith("$stead1:")).toBe(true);
      const i = row.error.length - 20;
      db.prepare("UPDATE runs SET error = ? WHERE id = ?").run(row.error.slice(0, i) + (row.error[i] === "A" ? "B" : "A") + row.error.slice(i + 1), row.id);
    } finally {
      db.close();
    }
  }, 60_000);

  afterAll(() => dir.remove());

  it("lists the other sessions (library and CLI)", async () => {
    const stead = createStead({ store, encryption: encryption() });
    let listed: string;
    try {
      listed = await stead.sessions().then(
        (s) => s.map((x) => x.id).sort().join(","),
        (e: unknown) => `refused ${(e as { code?: string }).code ?? "?"}`,
      );
    } finally {
      await stead.close();
    }
    const r = await cli(["sessions", "--json", "--store", store], ROOT, { env: { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: join(dir.dir, "no-keys") } });
    expect({ listed, cliExit: r.code }, r.stderr).toEqual({ listed: "s-a,s-b,s-c", cliExit: 0 });
  }, 60_000);
});
