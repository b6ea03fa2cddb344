/**
 * One `runs` row of an encrypted store whose sealed bytes were changed used to fail the whole run
 * listing: `stead ps` exited 7, `GET /runs` answered an error, the console's list showed none. The
 * listing shows every other run and marks the damaged one with its id and STEAD_DATA_TAMPERED;
 * reading that run itself still refuses. The bytes are changed in the store itself: in the SQLite
 * file on disk (the WAL checkpointed away first), or in the Postgres row.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type Run } from "../../src/client/index.js";
import { createStead, localKey, workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen } from "../../src/server/listen.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type StoreKind } from "../helpers/both-stores.js";
import { sealedStoreConsole } from "../helpers/sealed-console.js";
import { tempDir } from "../helpers/temp-store.js";
import { caught } from "../helpers/waiting.js";

const note = workflow("hostile-note", async (ctx, input: { note: string }) => ctx.step("say", () => input.note));
const IDS = ["run-a", "run-b", "run-c"];
const DAMAGED = "run-b";

/** Changes one byte inside `value` (a sealed value as the store keeps it: text or bytes), keeping its length. */
function changed(value: string | Buffer): Buffer {
  const bytes = Buffer.from(value);
  const i = bytes.length - 20;
  // A base64url character for another one (text), or any other byte (bytes): either way the tag no longer matches.
  bytes[i] = typeof value === "string" ? (bytes[i] === 0x41 ? 0x42 : 0x41) : (bytes[i] ?? 0) ^ 0x01;
  return bytes;
}

/**
 * Three runs in a new encrypted store, then DAMAGED's sealed input changed behind the store's
 * back: `sqlitePath` names the SQLite file to make; without it, `onStore` makes one of `kind`.
 */
async function tamperedStore(kind: StoreKind, label: string, key: Buffer, sqlitePath?: string): Promise<{ location: string; cleanup: () => Promise<void> }> {
  const encryption = { key: localKey(key, "the test's key") };
  const s = sqlitePath === undefined ? await onStore(kind, label, { encryption }) : undefined;
  const location = s ? s.location : String(sqlitePath);
  const stead = s ? s.stead : createStead({ store: location, encryption });
  for (const id of IDS) await stead.runs.start(note, { note: `note of ${id}` }, { id });
  await stead.close();
  if (kind === "sqlite") {
    const db = new Database(location, { fileMustExist: true });
    const [row] = db.prepare("SELECT input FROM runs WHERE id = ?").all(DAMAGED) as { input: string | Buffer }[];
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    expect(existsSync(`${location}-wal`) ? readFileSync(`${location}-wal`).length : 0).toBe(0);
    const stored = row?.input ?? "";
    const sealed = Buffer.from(stored);
    expect(sealed.length).toBeGreaterThan(40);
    const file = readFileSync(location);
    let copies = 0;
    for (let at = file.indexOf(sealed); at >= 0; at = file.indexOf(sealed, at + 1)) {
      changed(stored).copy(file, at);
      copies++;
    }
    expect(copies).toBeGreaterThan(0);
    writeFileSync(location, file);
  } else if (s) {
    const [row] = await s.rows("SELECT input FROM runs WHERE id = ?", DAMAGED);
    await s.write("UPDATE runs SET input = ? WHERE id = ?", changed(String(row?.input)).toString(), DAMAGED);
  }
  return { location, cleanup: async () => s?.cleanup() };
}

interface PsRow {
  id: string;
  status: string;
  damaged?: { code: string; message: string };
}

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("a tampered runs row in the run listing, on %s", (kind) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp(label: string): Promise<{ location: string; key: Buffer; stead: Stead }> {
    const key = randomBytes(32);
    const t = await tamperedStore(kind, label, key);
    cleanups.push(t.cleanup);
    const stead = createStead({ store: t.location, encryption: { key: localKey(key, "the test's key") } });
    cleanups.push(() => stead.close());
    return { location: t.location, key, stead };
  }

  it("the library lists the other runs and marks the damaged one; reading it alone still refuses", async () => {
    const { stead } = await setUp("tampered-list-lib");
    const page = await stead.runs.list({ sort: "createdAt", order: "asc" });
    expect(page.runs.map((r) => r.id)).toEqual(IDS);
    const [a, b, c] = page.runs;
    expect(a).toMatchObject({ id: "run-a", status: "pending", input: { note: "note of run-a" } });
    expect(c).toMatchObject({ id: "run-c", status: "pending", input: { note: "note of run-c" } });
    expect(a?.damaged).toBeUndefined();
    expect(b).toMatchObject({ id: DAMAGED, definition: "hostile-note", status: "pending", input: null, output: null, error: null, damaged: { code: "STEAD_DATA_TAMPERED" } });
    expect(b?.damaged?.message).toContain(DAMAGED);
    expect(await caught(() => stead.runs.get(DAMAGED))).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
  });

  it("`stead ps` exits 0 listing every run, the damaged one marked with its code, as text and as JSON", async () => {
    const { location, key } = await setUp("tampered-list-cli");
    const keyDir = tempDir("stead-hostile-keys-");
    cleanups.push(keyDir.remove);
    const env = { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: keyDir.dir };
    const json = await cli(["ps", "--json", "--order", "asc", "--store", location], ROOT, { env });
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as PsRow[];
    expect(rows.map((r) => r.id)).toEqual(IDS);
    expect(rows.map((r) => r.damaged?.code ?? null)).toEqual([null, "STEAD_DATA_TAMPERED", null]);
    expect(rows[1]?.damaged?.message).toContain(DAMAGED);
    const text = await cli(["ps", "--store", location], ROOT, { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines.find((l) => l.startsWith(DAMAGED))).toContain("STEAD_DATA_TAMPERED");
    for (const id of ["run-a", "run-c"]) expect(lines.find((l) => l.startsWith(id))).not.toContain("STEAD_DATA_TAMPERED");
  });

  it("GET /runs answers 200 with every run and the damaged one marked; the typed client's listing carries the mark", async () => {
    const { stead } = await setUp("tampered-list-http");
    const token = (await stead.tokens.create({ name: "olivia", role: "operator" })).token;
    const server = await listen({ stead, authenticate: tokensOf(stead), port: 0, maxBodyBytes: 64 * 1024 });
    cleanups.push(() => server.close(1_000));
    const res = await fetch(`${server.url}/api/v1/runs?order=asc`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { runs: PsRow[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.runs.map((r) => [r.id, r.damaged?.code ?? null])).toEqual([
      ["run-a", null],
      [DAMAGED, "STEAD_DATA_TAMPERED"],
      ["run-c", null],
    ]);

    const client = createClient({ url: server.url, token });
    const page = await client.runs.list({ order: "asc" });
    expectTypeOf<Run["damaged"]>().toEqualTypeOf<{ code: "STEAD_DATA_TAMPERED"; message: string } | undefined>();
    const marked = page.runs.find((r) => r.damaged !== undefined);
    expect(marked?.id).toBe(DAMAGED);
    expect(marked?.damaged?.code).toBe("STEAD_DATA_TAMPERED");
  });
});

describe("a tampered runs row in the console's run list", () => {
  const consoles = sealedStoreConsole("stead-hostile-console");

  it("lists every run, the damaged one marked with STEAD_DATA_TAMPERED", async () => {
    const { c } = await consoles.open((path, key) => tamperedStore("sqlite", "tampered-list-console", key, path), "/runs");
    try {
      const damaged = c.page.locator(`tr[data-run="${DAMAGED}"]`);
      await damaged.waitFor({ timeout: 15_000 });
      for (const id of ["run-a", "run-c"]) await c.page.locator(`tr[data-run="${id}"]`).waitFor({ timeout: 5_000 });
      expect(await damaged.innerText()).toContain("STEAD_DATA_TAMPERED");
      for (const id of ["run-a", "run-c"]) expect(await c.page.locator(`tr[data-run="${id}"]`).innerText()).not.toContain("STEAD_DATA_TAMPERED");
      await c.shot("hostile-tampered-run-list");
      expect(c.errors).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
