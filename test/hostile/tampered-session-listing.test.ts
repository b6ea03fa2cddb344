/**
 * Review 2 (item 8): the session listing opens each session's last turn's sealed error, and one
 * changed error failed the listing of every session: `stead sessions` exited 7,
 * `stead.sessions.list()` refused, and so did `GET /sessions`, MCP's `list_sessions` and the console's
 * sessions page. Expected as for the run listing: the other sessions listed, the damaged one
 * marked with STEAD_DATA_TAMPERED and a message naming the row; reading that session itself (its
 * turns, its transcript) and sending it a turn still refuse, changing nothing.
 *
 * Three sessions of one encrypted store, each with one failed turn; then s-b's turn's sealed
 * error is changed: in the SQLite file's bytes, or by an UPDATE of the Postgres row.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type Session } from "../../src/client/index.js";
import { createStead, localKey, workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type StoreKind } from "../helpers/both-stores.js";
import { sealedStoreConsole } from "../helpers/sealed-console.js";
import { ok } from "../helpers/mcp.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";
import { caught } from "../helpers/waiting.js";
import { tamperSealed } from "./sealed-tampering.js";

const talk = workflow("hostile-talk", { version: "1" }, async (ctx, input: { text: string }) =>
  ctx.step("answer", () => {
    if (input.text === "fail") throw new Error("the turn failed on purpose");
    return `heard ${input.text}`;
  }),
);

const SESSIONS = ["s-a", "s-b", "s-c"];
const DAMAGED = "s-b";
const TAMPERED = "STEAD_DATA_TAMPERED";

/** The store described above; `sqlitePath` names the SQLite file to make, else `onStore` makes one of `kind`. */
async function damagedStore(kind: StoreKind, label: string, key: Buffer, sqlitePath?: string): Promise<{ location: string; damagedTurn: string; cleanup: () => Promise<void> }> {
  const encryption = { key: localKey(key, "the test's key") };
  const s = sqlitePath === undefined ? await onStore(kind, label, { encryption }) : undefined;
  const location = s ? s.location : String(sqlitePath);
  const stead = s ? s.stead : createStead({ store: location, encryption });
  let damagedTurn = "";
  try {
    const w = stead.worker({ definitions: [talk], ...FAST_WORKER });
    w.start();
    try {
      for (const id of SESSIONS) {
        const { runId } = await stead.session(talk, id).send({ text: "fail" });
        await stead.runs.waitFor(runId, { timeoutMs: 30_000 });
        if (id === DAMAGED) damagedTurn = runId;
      }
    } finally {
      await w.stop({ graceMs: 500 });
    }
  } finally {
    await stead.close();
  }
  await tamperSealed(kind, location, "runs", "error", damagedTurn);
  return { location, damagedTurn, cleanup: async () => s?.cleanup() };
}

const marks = (list: readonly { id: string; damaged?: { code: string } | undefined }[]) => list.map((s) => [s.id, s.damaged?.code ?? null]).sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
const EXPECTED = [
  ["s-a", null],
  [DAMAGED, TAMPERED],
  ["s-c", null],
];

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("a tampered turn in the session listing, on %s", (kind) => {
  const key = randomBytes(32);
  const keyDir = tempDir("stead-hostile-session-keys-");
  const env = { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: keyDir.dir };
  let location = "";
  let damagedTurn = "";
  let cleanup: () => Promise<void> = () => Promise.resolve();
  let stead: Stead;
  let server: Listening;
  let token = "";

  beforeAll(async () => {
    const made = await damagedStore(kind, "tampered-session", key);
    ({ location, damagedTurn, cleanup } = made);
    stead = createStead({ store: location, encryption: { key: localKey(key, "the test's key") } });
    token = (await stead.tokens.create({ name: "olivia", role: "operator" })).token;
    server = await listen({ stead, authenticate: tokensOf(stead), port: 0, maxBodyBytes: 64 * 1024 });
  }, 120_000);

  afterAll(async () => {
    await server?.close(1_000);
    await stead?.close();
    await cleanup();
    keyDir.remove();
  });

  it("the library lists every session, the damaged one marked; reading it or sending it a turn still refuses, changing nothing", async () => {
    const list = await stead.sessions.list();
    expect(marks(list)).toEqual(EXPECTED);
    const damaged = list.find((s) => s.id === DAMAGED);
    expect(damaged).toMatchObject({ definition: "hostile-talk", turns: 1, last: { runId: damagedTurn, turn: 1, error: null }, damaged: { code: TAMPERED } });
    expect(damaged?.damaged?.message).toContain(`runs row ${damagedTurn}`);
    for (const id of ["s-a", "s-c"]) expect(list.find((s) => s.id === id)?.last?.error).toBe("the turn failed on purpose");

    expect(await caught(() => stead.sessions.get(DAMAGED))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.sessions.transcript(DAMAGED))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.session(talk, DAMAGED).send({ text: "again" }))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.sessions.send(DAMAGED, { text: "again" }))).toMatchObject({ code: TAMPERED });
    expect((await stead.sessions.list({ sessionId: DAMAGED }))[0]?.turns).toBe(1);
  });

  it("`stead sessions` exits 0 listing every session, the damaged one marked, as JSON and as text", async () => {
    const json = await cli(["sessions", "--json", "--store", location], ROOT, { env });
    expect(json.code, json.stderr).toBe(0);
    expect(marks(JSON.parse(json.stdout) as { id: string; damaged?: { code: string } }[])).toEqual(EXPECTED);
    const text = await cli(["sessions", "--store", location], ROOT, { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines.find((l) => l.startsWith(DAMAGED))).toContain(TAMPERED);
    for (const id of ["s-a", "s-c"]) expect(lines.find((l) => l.startsWith(id))).toContain("the turn failed on purpose");
    expect(text.stderr).toContain(`runs row ${damagedTurn}`);
  }, 60_000);

  it("GET /sessions answers 200 with the damaged one marked, as the typed client and MCP's list_sessions do; GET /sessions/s-b is refused", async () => {
    const res = await fetch(`${server.url}/api/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { sessions: { id: string; damaged?: { code: string } }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(marks(body.sessions)).toEqual(EXPECTED);
    const one = await fetch(`${server.url}/api/v1/sessions/${DAMAGED}`, { headers: { authorization: `Bearer ${token}` } });
    expect({ status: one.status, code: ((await one.json()) as { code?: string }).code }).toEqual({ status: 500, code: TAMPERED });

    const client = createClient({ url: server.url, token });
    expectTypeOf<Session["damaged"]>().toEqualTypeOf<{ code: "STEAD_DATA_TAMPERED"; message: string } | undefined>();
    expect(marks((await client.sessions.list()).sessions)).toEqual(EXPECTED);

    const mcp = new Client({ name: "stead-test", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const { sessions } = await ok<{ sessions: { id: string; damaged?: { code: string } }[] }>(mcp, "list_sessions", {});
      expect(marks(sessions)).toEqual(EXPECTED);
    } finally {
      await mcp.close();
    }
  });
});

describe("a tampered turn in the console's sessions page", () => {
  const consoles = sealedStoreConsole("stead-hostile-session-console");

  it("lists every session, the damaged one marked with STEAD_DATA_TAMPERED", async () => {
    const { c } = await consoles.open((path, key) => damagedStore("sqlite", "tampered-session-console", key, path), "/sessions");
    try {
      for (const id of SESSIONS) await c.page.locator(`tr[data-session="${id}"]`).waitFor({ timeout: 15_000 });
      expect(await c.page.locator(`tr[data-session="${DAMAGED}"]`).innerText()).toContain(TAMPERED);
      for (const id of ["s-a", "s-c"]) expect(await c.page.locator(`tr[data-session="${id}"]`).innerText()).not.toContain(TAMPERED);
      await c.shot("hostile-tampered-session");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 120_000);
});
