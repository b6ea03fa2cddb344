/**
 * Review 2 (item 8): the run listing marks a run whose `runs` row fails to open, but one changed
 * `waits` row (an approval's sealed request) or `holds` row (a hold's sealed reason) still failed
 * every listing that reads a run's open waits and holds: `stead ps` exited 7 naming that row,
 * `GET /runs` answered 500, and with the hold, `stead holds` exited 7 too; the inbox (`GET /waits`)
 * and `GET /holds` failed the same way. Expected as for a runs row: every listing lists the
 * others and marks the damaged wait or hold (and its run) with STEAD_DATA_TAMPERED and a message
 * naming the row; a read of that run, wait or hold itself still refuses, changing nothing.
 *
 * Five runs of one encrypted store: w-a, w-b, w-c wait at approval "ok"; h-a and h-b were
 * approved and then claimed by a worker serving another version, so each is held
 * definition_changed. Then w-b's wait request and h-a's hold reason are changed: in the SQLite
 * file's bytes, or by an UPDATE of the Postgres row.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type Hold, type OpenWait } from "../../src/client/index.js";
import { createStead, localKey, workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type StoreKind } from "../helpers/both-stores.js";
import { sealedStoreConsole } from "../helpers/sealed-console.js";
import { ok, refused } from "../helpers/mcp.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";
import { caught } from "../helpers/waiting.js";
import { tamperSealed } from "./sealed-tampering.js";

const gated = (version: string) =>
  workflow("hostile-gated", { version }, async (ctx, n: number) => {
    await ctx.step("a", () => `a ${n}`);
    const d = await ctx.approval("ok", { question: `go ahead with ${n}?` });
    return ctx.step("b", () => `b ${n} ${String(d.approved)}`);
  });

const WAITING = ["w-a", "w-b", "w-c"];
const HELD = ["h-a", "h-b"];
const DAMAGED_WAIT = "w-b";
const DAMAGED_HOLD = "h-a";
const TAMPERED = "STEAD_DATA_TAMPERED";
const marked = { code: TAMPERED, message: expect.any(String) as unknown };

/** The store described above; `sqlitePath` names the SQLite file to make, else `onStore` makes one of `kind`. */
async function damagedStore(kind: StoreKind, label: string, key: Buffer, sqlitePath?: string): Promise<{ location: string; cleanup: () => Promise<void> }> {
  const encryption = { key: localKey(key, "the test's key") };
  const s = sqlitePath === undefined ? await onStore(kind, label, { encryption }) : undefined;
  const location = s ? s.location : String(sqlitePath);
  const stead = s ? s.stead : createStead({ store: location, encryption });
  try {
    const w1 = stead.worker({ definitions: [gated("1")], ...FAST_WORKER });
    w1.start();
    try {
      for (const [i, id] of [...WAITING, ...HELD].entries()) await stead.runs.start(gated("1"), i + 1, { id });
      for (const id of [...WAITING, ...HELD]) await stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 30_000 });
    } finally {
      await w1.stop({ graceMs: 500 });
    }
    for (const id of HELD) await stead.runs.approve(id, "ok");
    const w2 = stead.worker({ definitions: [gated("2")], ...FAST_WORKER });
    w2.start();
    try {
      for (const id of HELD) await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 30_000 });
    } finally {
      await w2.stop({ graceMs: 500 });
    }
  } finally {
    await stead.close();
  }
  await tamperSealed(kind, location, "waits", "request", DAMAGED_WAIT);
  await tamperSealed(kind, location, "holds", "reason", DAMAGED_HOLD);
  return { location, cleanup: async () => s?.cleanup() };
}

interface Marked {
  damaged?: { code: string } | undefined;
}
/** [id, damage code or null] of each, sorted by id. */
function marks<T extends Marked>(rows: readonly T[], id: (r: T) => string): [string, string | null][] {
  return rows.map((r): [string, string | null] => [id(r), r.damaged?.code ?? null]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
}
const byRun = (r: { runId: string }) => r.runId;
const byId = (r: { id: string }) => r.id;

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("a tampered waits row and holds row in the listings, on %s", (kind) => {
  const key = randomBytes(32);
  const keyDir = tempDir("stead-hostile-wait-keys-");
  const env = { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: keyDir.dir };
  let location = "";
  let cleanup: () => Promise<void> = () => Promise.resolve();
  let stead: Stead;
  let server: Listening;
  let token = "";

  beforeAll(async () => {
    const made = await damagedStore(kind, "tampered-wait-hold", key);
    location = made.location;
    cleanup = made.cleanup;
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

  it("the library: a page's activity, the inbox and the holds listing list every other wait and hold and mark the damaged ones", async () => {
    const page = await stead.runs.list({ sort: "createdAt", order: "asc" });
    expect(page.runs.map((r) => r.id)).toEqual([...WAITING, ...HELD]);
    const activity = new Map((await stead.runs.activity(page.runs.map((r) => r.id))).map((a) => [a.runId, a]));
    const wb = activity.get(DAMAGED_WAIT);
    expect(wb?.openWaits).toEqual([expect.objectContaining({ name: "ok", kind: "approval", status: "open", damaged: marked })]);
    expect(wb?.openWaits[0]?.damaged?.message).toContain(`waits row ${DAMAGED_WAIT}/ok`);
    expect(wb?.damaged).toEqual(wb?.openWaits[0]?.damaged);
    for (const [i, id] of ["w-a", "w-c"].entries()) {
      expect(activity.get(id)?.openWaits).toEqual([expect.objectContaining({ name: "ok", request: { question: `go ahead with ${i * 2 + 1}?` } })]);
      expect(activity.get(id)?.damaged).toBeUndefined();
    }
    const ha = activity.get(DAMAGED_HOLD);
    expect(ha?.openHolds).toEqual([expect.objectContaining({ runId: DAMAGED_HOLD, kind: "definition_changed", status: "open", damaged: marked })]);
    expect(ha?.openHolds[0]?.damaged?.message).toContain(`holds row ${DAMAGED_HOLD}/definition_changed`);
    expect(ha?.damaged).toEqual(ha?.openHolds[0]?.damaged);
    expect(activity.get("h-b")?.openHolds).toEqual([expect.objectContaining({ kind: "definition_changed", reason: expect.stringMatching(/\w/) as unknown })]);
    expect(activity.get("h-b")?.openHolds[0]?.damaged).toBeUndefined();

    const inbox = await stead.waits.list({ kind: "approval" });
    expect(marks(inbox.waits, byRun)).toEqual([
      ["w-a", null],
      [DAMAGED_WAIT, TAMPERED],
      ["w-c", null],
    ]);
    const holds = await stead.holds.list();
    expect(marks(holds, byRun)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
    ]);
  });

  it("reading the damaged wait or hold itself still refuses, and a refused decision or release changes nothing", async () => {
    expect(await caught(() => stead.runs.waits(DAMAGED_WAIT))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.runs.approve(DAMAGED_WAIT, "ok"))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.holds.list({ runId: DAMAGED_HOLD }))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.runs.why(DAMAGED_HOLD))).toMatchObject({ code: TAMPERED });
    expect(await caught(() => stead.runs.release(DAMAGED_HOLD, undefined, { choice: "accept-change" }))).toMatchObject({ code: TAMPERED });
    expect((await stead.runs.get(DAMAGED_WAIT)).status).toBe("waiting");
    expect((await stead.runs.get(DAMAGED_HOLD)).status).toBe("held");
    expect(marks(await stead.holds.list(), byRun)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
    ]);
  });

  it("`stead ps` and `stead holds` exit 0 listing every run and hold, the damaged ones marked, as JSON and as text", async () => {
    const json = await cli(["ps", "--json", "--order", "asc", "--store", location], ROOT, { env });
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { id: string; damaged?: { code: string }; waitingFor: { name: string; damaged?: { code: string } }[]; holds: { kind: string; damaged?: { code: string } }[] }[];
    expect(marks(rows, byId)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
      ["w-a", null],
      [DAMAGED_WAIT, TAMPERED],
      ["w-c", null],
    ]);
    expect(rows.find((r) => r.id === DAMAGED_WAIT)?.waitingFor).toEqual([expect.objectContaining({ name: "ok", damaged: marked })]);
    expect(rows.find((r) => r.id === "w-a")?.waitingFor).toEqual([{ kind: "approval", name: "ok", wakeAt: null }]);
    expect(rows.find((r) => r.id === DAMAGED_HOLD)?.holds).toEqual([expect.objectContaining({ kind: "definition_changed", damaged: marked })]);
    expect(rows.find((r) => r.id === "h-b")?.holds[0]?.damaged).toBeUndefined();

    const text = await cli(["ps", "--store", location], ROOT, { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    for (const id of [DAMAGED_WAIT, DAMAGED_HOLD]) expect(lines.find((l) => l.startsWith(id))).toContain(TAMPERED);
    for (const id of ["w-a", "w-c", "h-b"]) expect(lines.find((l) => l.startsWith(id))).not.toContain(TAMPERED);
    expect(text.stderr).toContain(`waits row ${DAMAGED_WAIT}/ok`);

    const holdsJson = await cli(["holds", "--json", "--store", location], ROOT, { env });
    expect(holdsJson.code, holdsJson.stderr).toBe(0);
    expect(marks(JSON.parse(holdsJson.stdout) as { runId: string; damaged?: { code: string } }[], byRun)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
    ]);
    const holdsText = await cli(["holds", "--store", location], ROOT, { env });
    expect(holdsText.code, holdsText.stderr).toBe(0);
    const holdLines = holdsText.stdout.split("\n");
    expect(holdLines.find((l) => l.startsWith(DAMAGED_HOLD))).toContain(TAMPERED);
    expect(holdLines.find((l) => l.startsWith("h-b"))).not.toContain(TAMPERED);

    const status = await cli(["status", DAMAGED_HOLD, "--store", location], ROOT, { env });
    expect({ code: status.code, names: status.stderr.includes(`holds row ${DAMAGED_HOLD}/definition_changed`) }, status.stderr).toEqual({ code: 7, names: true });
  }, 60_000);

  it("GET /runs, /waits and /holds answer 200 with the damaged ones marked, and the typed client's listings carry the marks; the run itself is refused", async () => {
    const get = async (path: string) => {
      const res = await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const runs = await get("/runs?order=asc");
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    expect(marks(runs.body.runs as (Marked & { id: string })[], byId)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
      ["w-a", null],
      [DAMAGED_WAIT, TAMPERED],
      ["w-c", null],
    ]);
    const waits = await get("/waits?kind=approval");
    expect(waits.status, JSON.stringify(waits.body)).toBe(200);
    expect(marks(waits.body.waits as (Marked & { runId: string })[], byRun)).toEqual([
      ["w-a", null],
      [DAMAGED_WAIT, TAMPERED],
      ["w-c", null],
    ]);
    const holds = await get("/holds");
    expect(holds.status, JSON.stringify(holds.body)).toBe(200);
    expect(marks(holds.body.holds as (Marked & { runId: string })[], byRun)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
    ]);
    for (const id of [DAMAGED_WAIT, DAMAGED_HOLD]) {
      const one = await get(`/runs/${id}`);
      expect({ status: one.status, code: one.body.code }).toEqual({ status: 500, code: TAMPERED });
    }

    const client = createClient({ url: server.url, token });
    expectTypeOf<OpenWait["damaged"]>().toEqualTypeOf<{ code: "STEAD_DATA_TAMPERED"; message: string } | undefined>();
    expectTypeOf<Hold["damaged"]>().toEqualTypeOf<{ code: "STEAD_DATA_TAMPERED"; message: string } | undefined>();
    expect((await client.runs.list({ order: "asc" })).runs.filter((r) => r.damaged?.code === TAMPERED).map((r) => r.id)).toEqual([DAMAGED_WAIT, DAMAGED_HOLD]);
    expect((await client.waits.list({ kind: "approval" })).waits.filter((w) => w.damaged !== undefined).map((w) => [w.runId, w.name])).toEqual([[DAMAGED_WAIT, "ok"]]);
    const listed = (await client.holds.list()).holds;
    expect(marks(listed, byRun)).toEqual([
      [DAMAGED_HOLD, TAMPERED],
      ["h-b", null],
    ]);
  });

  it("MCP: list_holds lists both holds, the damaged one marked; get_run of its run is refused", async () => {
    const mcp = new Client({ name: "stead-test", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      const { holds } = await ok<{ holds: { runId: string; damaged?: { code: string } }[] }>(mcp, "list_holds", {});
      expect(marks(holds, byRun)).toEqual([
        [DAMAGED_HOLD, TAMPERED],
        ["h-b", null],
      ]);
      expect((await refused(mcp, "get_run", { runId: DAMAGED_HOLD })).code).toBe(TAMPERED);
    } finally {
      await mcp.close();
    }
  });
});

describe("a tampered waits row and holds row in the console's lists", () => {
  const consoles = sealedStoreConsole("stead-hostile-wait-console");

  it("the runs list, the inbox and the holds page show every other run, approval and hold, and the damaged ones marked", async () => {
    const { c, url } = await consoles.open((path, key) => damagedStore("sqlite", "tampered-wait-hold-console", key, path), "/runs");
    try {
      for (const id of [...WAITING, ...HELD]) await c.page.locator(`tr[data-run="${id}"]`).waitFor({ timeout: 15_000 });
      for (const id of [DAMAGED_WAIT, DAMAGED_HOLD]) expect(await c.page.locator(`tr[data-run="${id}"]`).innerText()).toContain(TAMPERED);
      for (const id of ["w-a", "w-c", "h-b"]) expect(await c.page.locator(`tr[data-run="${id}"]`).innerText()).not.toContain(TAMPERED);
      await c.shot("hostile-tampered-wait-runs");

      await c.page.goto(`${url}/inbox`);
      for (const id of WAITING) await c.page.locator(`[data-approval="${id}/ok"]`).waitFor({ timeout: 15_000 });
      const damaged = c.page.locator(`[data-approval="${DAMAGED_WAIT}/ok"]`);
      expect(await damaged.innerText()).toContain(TAMPERED);
      expect(await damaged.locator("form, .decide").count()).toBe(0);
      for (const id of ["w-a", "w-c"]) {
        const card = c.page.locator(`[data-approval="${id}/ok"]`);
        expect(await card.innerText()).not.toContain(TAMPERED);
        await card.locator(".decide").waitFor({ timeout: 5_000 });
      }
      await c.shot("hostile-tampered-wait-inbox");

      await c.page.goto(`${url}/holds`);
      await c.page.locator("article[data-hold]").nth(1).waitFor({ timeout: 15_000 });
      const holdOf = (run: string) => c.page.locator("article[data-hold]", { has: c.page.locator(`a[href="/runs/${run}"]`) });
      expect(await holdOf(DAMAGED_HOLD).innerText()).toContain(TAMPERED);
      expect(await holdOf("h-b").innerText()).not.toContain(TAMPERED);
      await c.shot("hostile-tampered-hold");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 120_000);
});
