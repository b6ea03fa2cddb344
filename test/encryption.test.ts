/**
 * Encryption at rest, on both stores: a run whose input, step outputs, approval request and
 * answer, checkpoint metadata, events, agent model text and tool results and workspace files hold
 * a marker string (and a redacted secret) leaves neither in the database's files (SQLite's .db and
 * -wal) nor in its tables read as text (Postgres, values decompressed), every stored blob also
 * inflated; the same run on a plain store shows the marker to the same scan. With its key the run
 * reads back whole (output, journal, workspace restored); without it, or with another key, the store
 * refuses to open. A ciphertext changed or moved to another row fails its read naming the row. Keys
 * rotate without rewriting a value. An export holds neither string, and imports into a store with
 * another key, which reads it all back (workspace too) once the source's key is gone.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { basename, join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, createStead, modelTurns, scriptedModel, tool, workflow, type Stead } from "../src/index.js";
import { createKeyFile, keyFileIn, KeyChain, keyFileProvider } from "../src/store/encryption/key-providers.js";
import { rotateKeys } from "../src/store/encryption/keyring.js";
import { newKey } from "../src/store/encryption/cipher.js";
import { CheckedBackup } from "../src/stead/backup.js";
import { dumpSigner } from "../src/stead/transfer.js";
import { restoreSnapshot } from "../src/workspace/index.js";
import { onStore, STORE_KINDS, type OnStore, type StoreKind } from "./helpers/both-stores.js";
import { FAST_WORKER, tempDir } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const MARKER = "MARKER-at-rest-51c7e0";
const SECRET = "sk-live-9fJx2QmT4bWcY8rVpL3nK6sD";
/** A file the run's workspace holds: compressible, so a plain store deflates it. */
const FILE_TEXT = `${MARKER}\n`.repeat(200);

/** Its input names its workspace (the directory passed as `workspace` too). */
const writer = workflow("at-rest", { version: "1" }, async (ctx, input: { note: string; root: string }) => {
  const got = await ctx.step("fetch", { effect: true }, () => {
    writeFileSync(join(input.root, "notes.txt"), FILE_TEXT);
    return { marker: MARKER, key: SECRET, note: input.note };
  });
  const decision = await ctx.approval("ship", { preview: `${MARKER} ${got.note}` });
  return { marker: MARKER, reason: decision.reason };
});

const lookup = tool({ description: "look a thing up", input: z.object({ q: z.string() }), run: ({ q }) => ({ found: `${MARKER} for ${q}` }) });
const helper = agent("at-rest-agent", {
  model: scriptedModel({
    respond: (prompt) => (modelTurns(prompt) === 0 ? { toolCalls: [{ name: "lookup", input: { q: MARKER } }] } : { text: `the answer is ${MARKER}` }),
  }),
  tools: { lookup },
  instructions: "Look it up.",
});

/** Everything the database holds, as text a person with the files could read; every blob inflated too. */
async function storedText(s: OnStore): Promise<string> {
  const parts: string[] = [];
  if (s.kind === "sqlite") for (const f of [s.location, `${s.location}-wal`].filter(existsSync)) parts.push(readFileSync(f).toString("latin1"));
  else {
    const tables = await s.rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()");
    // row_to_json reads every value detoasted (decompressed): a raw page scan of compressed values proves nothing.
    for (const t of tables) for (const r of await s.rows(`SELECT row_to_json(x)::text AS j FROM "${String(t.tablename)}" x`)) parts.push(String(r.j));
  }
  for (const b of await s.rows("SELECT data FROM blobs")) {
    const data = b.data as Buffer;
    for (const from of [0, 1]) {
      try {
        parts.push(inflateRawSync(data.subarray(from)).toString("latin1"));
      } catch {
        // Not deflate from there: the bytes as stored are scanned above.
      }
    }
  }
  return parts.join("\n");
}

/** Runs both definitions to the end on `s`; the workflow's workspace is `ws`. */
async function runBoth(s: OnStore, ws: string): Promise<void> {
  const w = s.stead.worker({ definitions: [writer, helper], ...FAST_WORKER });
  w.start();
  try {
    await s.stead.runs.start(writer, { note: `note ${MARKER}`, root: ws }, { id: "rest-1", workspace: ws });
    await s.stead.runs.waitFor("rest-1", { timeoutMs: 20_000, until: (r) => r.status === "waiting" });
    await s.stead.runs.approve("rest-1", "ship", { by: "ann", reason: `ok ${MARKER}` });
    expect((await s.stead.runs.waitFor("rest-1", { timeoutMs: 20_000 })).status).toBe("completed");
    await s.stead.runs.start(helper, `find ${MARKER}`, { id: "rest-2" });
    expect((await s.stead.runs.waitFor("rest-2", { timeoutMs: 20_000 })).status).toBe("completed");
  } finally {
    await w.stop({ graceMs: 500 });
  }
}

function keyDir(): { dir: string; remove: () => void } {
  const t = tempDir("stead-keys");
  return { dir: t.dir, remove: t.remove };
}

describe.each(STORE_KINDS)("encryption at rest on %s", (kind: StoreKind) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function encrypted(label: string): Promise<{ s: OnStore; dir: string; keyFile: string }> {
    const k = keyDir();
    cleanups.push(k.remove);
    const key = createKeyFile({ dir: k.dir });
    const s = await onStore(kind, label, { encryption: { key: key.where, keyDir: k.dir }, redaction: {} });
    cleanups.push(() => s.cleanup());
    return { s, dir: k.dir, keyFile: key.where };
  }

  it("keeps every payload and file out of the store's files in the clear; the run reads back whole with its key", async () => {
    const { s, dir } = await encrypted("enc-scan");
    const ws = tempDir("enc-ws");
    cleanups.push(ws.remove);
    await runBoth(s, ws.dir);

    const text = await storedText(s);
    expect(text.includes(MARKER), "the encrypted store holds the marker").toBe(false);
    expect(text.includes(SECRET)).toBe(false);
    expect((await s.rows("SELECT count(*) AS n FROM blobs"))[0]?.n).not.toBe(0);

    // The same scan finds the marker in a plain store that ran the same: it can see what is stored.
    const plain = await onStore(kind, "enc-plain", {});
    cleanups.push(() => plain.cleanup());
    const ws2 = tempDir("enc-ws2");
    cleanups.push(ws2.remove);
    await runBoth(plain, ws2.dir);
    const plainText = await storedText(plain);
    expect(plainText.includes(MARKER)).toBe(true);
    expect(plainText.includes(MARKER.repeat(1) + "\n" + MARKER), "a plain store's workspace file, inflated").toBe(true);

    // Another instance, with only the key directory, reads it all back.
    const again = createStead({ store: s.location, encryption: { keyDir: dir } });
    cleanups.push(() => again.close());
    const run = await again.runs.get("rest-1");
    expect(run.output).toEqual({ marker: MARKER, reason: `ok ${MARKER}` });
    expect(run.input).toEqual({ note: `note ${MARKER}`, root: ws.dir });
    expect((await again.runs.get("rest-2")).output).toMatchObject({ text: `the answer is ${MARKER}` });
    const snapshots = await again.store.snapshots("rest-1");
    const last = snapshots.at(-1);
    expect(last).toBeDefined();
    const target = join(tempDir("enc-restore").dir, "out");
    await restoreSnapshot(again.store, last!, target);
    expect(readFileSync(join(target, "notes.txt"), "utf8")).toBe(FILE_TEXT);
  }, 90_000);

  it("seals a wait's answer at the journal position its resolver names, and refuses one that names none, changing nothing", async () => {
    const { s } = await encrypted("enc-answer-position");
    const store = s.stead.store;
    await store.createRun({ id: "r1", definition: "d", module: null, fingerprint: null, input: "null", createdAt: Date.now() }, []);
    const open = { kind: "approval" as const, status: "waiting" as const, attempt: 1, startedAt: Date.now() };
    expect((await store.commit([[{ runId: "r1", steps: [{ seq: 3, stepId: "ok", ...open }], waits: [{ name: "ok", kind: "approval", seq: 3 }] }]]))[0]).toMatchObject({ ok: true });
    const unplaced = await caught(() => store.commit([[{ runId: "r1", resolveWaits: [{ name: "ok", status: "resolved", result: "true" }] }]]));
    expect(unplaced).toMatchObject({ code: "STEAD_INTERNAL", message: expect.stringContaining('wait "ok" of run r1 names no journal position') as string });
    expect((await store.waits("r1"))[0]).toMatchObject({ status: "open", result: null });
    expect((await store.commit([[{ runId: "r1", resolveWaits: [{ name: "ok", seq: 3, status: "resolved", result: "true" }] }]]))[0]).toMatchObject({ ok: true });
    expect((await store.journal("r1")).map((j) => [j.seq, j.status, j.output])).toEqual([[3, "completed", "true"]]);
    expect(String((await s.rows("SELECT result FROM waits WHERE run_id = ?", "r1"))[0]?.result)).not.toBe("true");
  });

  it("refuses to open without its key, or with another key under its name, changing nothing", async () => {
    const { s, dir } = await encrypted("enc-refuse");
    await runBoth(s, tempDir("enc-ws3").dir);
    await s.stead.close();
    const kekId = String((await s.rows("SELECT kek_id FROM data_keys"))[0]?.kek_id);
    const empty = keyDir();
    cleanups.push(empty.remove);

    const none = createStead({ store: s.location, encryption: { keyDir: empty.dir } });
    const e1 = await caught(() => none.runs.get("rest-1"));
    await none.close();
    expect(e1).toMatchObject({ code: "STEAD_KEY_MISSING" });
    expect(String((e1 as Error).message)).toContain(kekId);

    writeFileSync(keyFileIn(empty.dir, kekId), `stead-key-v1 ${newKey().toString("base64")}\n`, { mode: 0o600 });
    const wrong = createStead({ store: s.location, encryption: { keyDir: empty.dir } });
    const e2 = await caught(() => wrong.runs.get("rest-1"));
    await wrong.close();
    expect(e2).toMatchObject({ code: "STEAD_KEY_WRONG" });

    // A new key given for the store (its own still in the key directory) opens it; the store kept its keys.
    expect((await s.rows("SELECT count(*) AS n FROM data_keys"))[0]?.n).toEqual(kind === "sqlite" ? 2 : "2");
    expect(existsSync(keyFileIn(dir, kekId))).toBe(true);
  }, 60_000);

  it("fails the read of a ciphertext that was changed or moved to another row, naming the row", async () => {
    const { s } = await encrypted("enc-tamper");
    await runBoth(s, tempDir("enc-ws4").dir);
    const steps = await s.rows("SELECT seq, output FROM steps WHERE run_id = ? AND output IS NOT NULL ORDER BY seq", "rest-1");
    const [a, b] = steps;
    expect(a && b).toBeTruthy();
    // Moved: step b's sealed output copied over step a's.
    await s.write("UPDATE steps SET output = ? WHERE run_id = ? AND seq = ?", b!.output, "rest-1", a!.seq);
    const moved = await caught(() => s.stead.store.journal("rest-1"));
    expect(moved).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
    expect((moved as Error).message).toContain(`steps row rest-1/${String(a!.seq)}`);
    // Changed: one character of the run's input.
    const input = String((await s.rows("SELECT input FROM runs WHERE id = ?", "rest-2"))[0]?.input);
    const flipped = input.slice(0, -3) + (input.at(-3) === "A" ? "B" : "A") + input.slice(-2);
    await s.write("UPDATE runs SET input = ? WHERE id = ?", flipped, "rest-2");
    const changed = await caught(() => s.stead.runs.get("rest-2"));
    expect(changed).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
    expect((changed as Error).message).toContain("runs row rest-2");
    // Plain text written into an encrypted column is refused, not returned.
    await s.write("UPDATE runs SET output = ? WHERE id = ?", '{"forged":true}', "rest-1");
    const forged = await caught(() => s.stead.runs.get("rest-1"));
    expect(forged).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
    expect((forged as Error).message).toContain("plain text");
    // So is plain data in place of an event's sealed data; a step's completion, which holds only
    // what the steps table keeps in the clear (its id, seq, attempt and time), is stored as it is.
    const completed = await s.rows("SELECT data FROM events WHERE run_id = ? AND type = 'step.completed'", "rest-1");
    expect(completed.length).toBeGreaterThan(0);
    for (const e of completed) expect(Object.keys(JSON.parse(String(e.data)) as object).sort()).toEqual(["attempt", "ms", "seq", "step"]);
    const [sealedEvent] = await s.rows("SELECT seq FROM events WHERE run_id = ? AND data LIKE ? ORDER BY seq", "rest-2", '%"$sealed"%');
    expect(sealedEvent).toBeDefined();
    await s.write("UPDATE events SET data = ? WHERE seq = ?", '{"text":"forged"}', sealedEvent!.seq);
    const forgedEvent = await caught(() => s.stead.store.events({ runId: "rest-2" }));
    expect(forgedEvent).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
    expect((forgedEvent as Error).message).toContain("plain text");
    // Relabelled as an event the store writes itself, it is refused still: those have fields of their own.
    await s.write("UPDATE events SET type = 'run.pruned' WHERE seq = ?", sealedEvent!.seq);
    expect(await caught(() => s.stead.store.events({ runId: "rest-2" }))).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
  }, 60_000);

  it("rotates to a new key: data keys re-wrapped, no value rewritten, old values open with the new key alone", async () => {
    const { s, dir, keyFile } = await encrypted("enc-rotate");
    await runBoth(s, tempDir("enc-ws5").dir);
    const before = await s.rows("SELECT seq, output FROM steps WHERE run_id = ? ORDER BY seq", "rest-1");
    const keysBefore = await s.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id");
    const next = createKeyFile({ dir });
    const r = await rotateKeys(s.stead.store, new KeyChain(keyFileProvider(keyFile), dir), next);
    expect(r.rewrapped).toBe(keysBefore.length);
    const keysAfter = await s.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id");
    expect(keysAfter).toHaveLength(keysBefore.length + 1);
    for (const k of keysAfter) expect(k.kek_id).toBe(next.id);
    for (const k of keysBefore) expect(keysAfter.find((x) => x.id === k.id)?.wrapped).not.toBe(k.wrapped);
    expect(await s.rows("SELECT seq, output FROM steps WHERE run_id = ? ORDER BY seq", "rest-1")).toEqual(before);
    await s.stead.close();

    rmSync(keyFile);
    const fresh = createStead({ store: s.location, encryption: { keyDir: dir } });
    cleanups.push(() => fresh.close());
    expect((await fresh.runs.get("rest-1")).output).toEqual({ marker: MARKER, reason: `ok ${MARKER}` });
    // New values are sealed by the new data key.
    const w = fresh.worker({ definitions: [writer, helper], ...FAST_WORKER });
    w.start();
    try {
      await fresh.runs.start(helper, "after rotation", { id: "rest-3" });
      expect((await fresh.runs.waitFor("rest-3", { timeoutMs: 20_000 })).status).toBe("completed");
    } finally {
      await w.stop({ graceMs: 500 });
    }
    expect(String((await s.rows("SELECT input FROM runs WHERE id = ?", "rest-3"))[0]?.input)).toMatch(new RegExp(`^\\$stead1:${r.dataKey}:`));
  }, 60_000);

  it("refuses a key for a store that holds plain runs, changing nothing", async () => {
    const plain = await onStore(kind, "enc-was-plain", {});
    cleanups.push(() => plain.cleanup());
    await runBoth(plain, tempDir("enc-ws6").dir);
    await plain.stead.close();
    const k = keyDir();
    cleanups.push(k.remove);
    const key = createKeyFile({ dir: k.dir });
    const keyed = createStead({ store: plain.location, encryption: { key: key.where, keyDir: k.dir } });
    expect(await caught(() => keyed.runs.get("rest-1"))).toMatchObject({ code: "STEAD_STORE_PLAIN" });
    await keyed.close();
    expect(Number((await plain.rows("SELECT count(*) AS n FROM data_keys"))[0]?.n)).toBe(0);
  }, 60_000);

  it("exports sealed, and imports into a store with another key, which then opens without the first", async () => {
    const { s, keyFile } = await encrypted("enc-export");
    const ws = tempDir("enc-ws8");
    cleanups.push(ws.remove);
    await runBoth(s, ws.dir);
    const dump = await dumpOf(s.stead);
    expect(dump.includes(MARKER), "the export holds the marker").toBe(false);
    expect(dump.includes(SECRET)).toBe(false);

    // The target has its own key (given) and its own key directory, which lacks the source's key.
    const theirs = keyDir();
    cleanups.push(theirs.remove);
    const theirKey = createKeyFile({ dir: theirs.dir });
    const target = await onStore(kind, "enc-import", { encryption: { key: theirKey.where, keyDir: theirs.dir } });
    cleanups.push(() => target.cleanup());
    const keysBefore = await target.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id");
    const missing = await caught(() => target.stead.admin.importDump(() => Readable.from([dump])));
    expect(missing).toMatchObject({ code: "STEAD_KEY_MISSING" });
    expect((missing as Error).message).toContain(keyFileProvider(keyFile).id);
    expect(Number((await target.rows("SELECT count(*) AS n FROM runs"))[0]?.n)).toBe(0);
    expect(await target.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id")).toEqual(keysBefore);

    // With the source's key at hand too, the dump's keys are re-wrapped by the target's. An
    // import refused before its first row (the dump read differently the second time) puts the
    // target's own keys back.
    copyFileSync(keyFile, join(theirs.dir, basename(keyFile)));
    let reads = 0;
    const garbled = `${dump.split("\n")[0] ?? ""}\n{"t":"runs","r":1}\n`;
    expect(await caught(() => target.stead.admin.importDump(() => Readable.from([reads++ === 0 ? dump : garbled])))).toMatchObject({ code: "STEAD_BAD_DUMP" });
    expect(reads).toBe(2);
    expect(await target.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id")).toEqual(keysBefore);
    await target.stead.admin.importDump(() => Readable.from([dump]));
    const kekIds = (await target.rows("SELECT kek_id FROM data_keys")).map((r) => r.kek_id);
    expect(kekIds.length).toBeGreaterThan(1);
    expect(new Set(kekIds)).toEqual(new Set([theirKey.id]));
    expect((await storedText(target)).includes(MARKER)).toBe(false);
    await target.stead.close();
    rmSync(join(theirs.dir, basename(keyFile)));

    const opened = createStead({ store: target.location, encryption: { key: theirKey.where, keyDir: theirs.dir } });
    cleanups.push(() => opened.close());
    expect((await opened.runs.get("rest-1")).output).toEqual({ marker: MARKER, reason: `ok ${MARKER}` });
    expect((await opened.runs.get("rest-2")).output).toMatchObject({ text: `the answer is ${MARKER}` });
    const last = (await opened.store.snapshots("rest-1")).at(-1);
    expect(last).toBeDefined();
    const out = join(tempDir("enc-restore2").dir, "out");
    await restoreSnapshot(opened.store, last!, out);
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe(FILE_TEXT);
    // Runs go on there: a new one is sealed, and reads back.
    const w = opened.worker({ definitions: [writer, helper], ...FAST_WORKER });
    w.start();
    try {
      await opened.runs.start(helper, `again ${MARKER}`, { id: "rest-4" });
      expect((await opened.runs.waitFor("rest-4", { timeoutMs: 20_000 })).output).toMatchObject({ text: `the answer is ${MARKER}` });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    expect(String((await target.rows("SELECT input FROM runs WHERE id = ?", "rest-4"))[0]?.input)).toMatch(/^\$stead1:/);

    // A target set up with its own key (stead keys init) and opened by the key directory alone keeps that key.
    const third = await onStore(kind, "enc-import-dir", { encryption: { key: theirKey.where, keyDir: theirs.dir } });
    cleanups.push(() => third.cleanup());
    await third.stead.close();
    copyFileSync(keyFile, join(theirs.dir, basename(keyFile)));
    const byDir = createStead({ store: third.location, encryption: { keyDir: theirs.dir } });
    cleanups.push(() => byDir.close());
    await byDir.admin.importDump(() => Readable.from([dump]));
    await byDir.close();
    expect(new Set((await third.rows("SELECT kek_id FROM data_keys")).map((r) => r.kek_id))).toEqual(new Set([theirKey.id]));
  }, 90_000);

  it("refuses a plain dump into an encrypted store, and an encrypted dump into a plain store without its key, changing nothing", async () => {
    const plain = await onStore(kind, "enc-plain-src", {});
    cleanups.push(() => plain.cleanup());
    await runBoth(plain, tempDir("enc-ws9").dir);
    const plainDump = await dumpOf(plain.stead);
    expect(plainDump.includes(MARKER)).toBe(true);
    const { s } = await encrypted("enc-plain-into");
    const keys = await s.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id");
    expect(await caught(() => s.stead.admin.importDump(() => Readable.from([plainDump])))).toMatchObject({ code: "STEAD_STORE_PLAIN" });
    expect(Number((await s.rows("SELECT count(*) AS n FROM runs"))[0]?.n)).toBe(0);
    expect(await s.rows("SELECT id, kek_id, wrapped FROM data_keys ORDER BY id")).toEqual(keys);

    await runBoth(s, tempDir("enc-ws10").dir);
    const sealedDump = await dumpOf(s.stead);
    const bare = keyDir();
    cleanups.push(bare.remove);
    const target = await onStore(kind, "enc-into-plain", { encryption: { keyDir: bare.dir } });
    cleanups.push(() => target.cleanup());
    expect(await caught(() => target.stead.admin.importDump(() => Readable.from([sealedDump])))).toMatchObject({ code: "STEAD_KEY_MISSING" });
    expect(Number((await target.rows("SELECT count(*) AS n FROM runs"))[0]?.n)).toBe(0);
    expect(Number((await target.rows("SELECT count(*) AS n FROM data_keys"))[0]?.n)).toBe(0);
  }, 90_000);
});

/** The whole export of `stead`'s store, as text. */
async function dumpOf(stead: Stead): Promise<string> {
  const out: string[] = [];
  await stead.admin.exportDump(new Writable({ write: (c: Buffer, _e, done) => (out.push(c.toString()), done()) }));
  return out.join("");
}

describe("an encrypted SQLite store's backup", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("stays encrypted, opens where it lies with the key, and restores into a new store that the key opens", async () => {
    const k = keyDir();
    cleanups.push(k.remove);
    const key = createKeyFile({ dir: k.dir });
    const s = await onStore("sqlite", "enc-backup", { encryption: { key: key.where, keyDir: k.dir } });
    cleanups.push(() => s.cleanup());
    const ws = tempDir("enc-ws7");
    cleanups.push(ws.remove);
    await runBoth(s, ws.dir);
    const where = tempDir("enc-backups");
    cleanups.push(where.remove);
    const file = join(where.dir, "b.db");
    await s.stead.admin.backup(file);
    expect(readFileSync(file).toString("latin1").includes(MARKER)).toBe(false);

    // Opened where it lies, on a machine with the key directory only.
    const there = createStead({ store: file, readonly: true, encryption: { keyDir: k.dir } });
    cleanups.push(() => there.close());
    expect((await there.runs.get("rest-1")).output).toEqual({ marker: MARKER, reason: `ok ${MARKER}` });

    // Restored into a new store: its values come sealed, with their keys, and the key opens them.
    const target = join(where.dir, "restored", "stead.db");
    mkdirSync(join(where.dir, "restored"));
    const restoring = createStead({ store: target, encryption: { keyDir: k.dir } });
    const checked = await CheckedBackup.open(file, { signer: dumpSigner({ keyDir: k.dir }) });
    try {
      await restoring.admin.restoreBackup(checked);
    } finally {
      await checked.close();
    }
    expect((await restoring.runs.get("rest-2")).output).toMatchObject({ text: `the answer is ${MARKER}` });
    await restoring.close();
    expect(readFileSync(target).toString("latin1").includes(MARKER)).toBe(false);
    const without = createStead({ store: target, encryption: { keyDir: tempDir("enc-nokeys").dir } });
    expect(await caught(() => without.runs.get("rest-1"))).toMatchObject({ code: "STEAD_KEY_MISSING" });
    await without.close();
  }, 60_000);
});

describe("an encrypted SQLite store's journal", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const body = "lorem ipsum dolor sit amet ".repeat(40);
  const big = workflow("at-rest-kb", async (ctx) => {
    const a = await ctx.step("kb", () => ({ body }));
    return { length: a.body.length };
  });

  it("keeps each sealed value as its bytes, not base64 text, and reads, exports and imports it unchanged", async () => {
    const k = keyDir();
    cleanups.push(k.remove);
    const key = createKeyFile({ dir: k.dir });
    const s = await onStore("sqlite", "enc-bytes", { encryption: { key: key.where, keyDir: k.dir } });
    cleanups.push(() => s.cleanup());
    const w = s.stead.worker({ definitions: [big], ...FAST_WORKER });
    w.start();
    try {
      await s.stead.runs.start(big, undefined, { id: "kb-1" });
      expect((await s.stead.runs.waitFor("kb-1", { timeoutMs: 20_000 })).output).toEqual({ length: body.length });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    // What the file holds: the output is its JSON's length plus a few dozen bytes (flag, iv, tag, key id).
    const [row] = await s.rows("SELECT typeof(output) AS t, length(output) AS n FROM steps WHERE run_id = ? AND step_id = 'kb'", "kb-1");
    const plainLength = JSON.stringify({ body }).length;
    expect(row?.t).toBe("blob");
    expect(Number(row?.n)).toBeLessThan(plainLength + 64);
    expect(readFileSync(s.location).toString("latin1").includes(body.slice(0, 40))).toBe(false);

    const journal = await s.stead.store.journal("kb-1");
    expect(journal.find((j) => j.stepId === "kb")?.output).toBe(JSON.stringify({ body }));

    // A dump carries the sealed text, which another store with the same keys reads back.
    const dump = await dumpOf(s.stead);
    expect(dump.includes(body.slice(0, 40))).toBe(false);
    expect(dump).toMatch(/"\$stead1:[^"]+"/);
    const other = await onStore("sqlite", "enc-bytes-2", { encryption: { key: key.where, keyDir: k.dir } });
    cleanups.push(() => other.cleanup());
    await other.stead.admin.importDump(() => Readable.from([dump]));
    expect((await other.stead.store.journal("kb-1")).find((j) => j.stepId === "kb")?.output).toBe(JSON.stringify({ body }));
    expect((await other.stead.runs.get("kb-1")).output).toEqual({ length: body.length });
  }, 60_000);
});
