/**
 * Issue 39, item 3: no unkeyed hash next to sealed values. On an encrypted store, after a run with
 * a workspace file, a keyed start and a keyed signal, no SHA-256 of what was sealed (each keyed
 * command's arguments as the idempotency digest is taken over them, the file's content, every
 * tree object of each snapshot, the snapshot root's plain form) appears in the store's files
 * (SQLite's file and WAL; Postgres's tables as text), as hex, base64 or raw bytes, while the same
 * scan finds them in a plain store where they are not secrets. On a plain store the digest is
 * taken after redaction: a secret's hash is not stored either. A repeat of a key recorded with the
 * old digest form is recognised until the key's TTL ends; after an export and an import into a
 * store with another key, repeats are still recognised and other arguments still refused.
 */
import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createStead, workflow, type Stead } from "../../src/index.js";
import { canonical } from "../../src/engine/canonical.js";
import { createKeyFile } from "../../src/store/encryption/key-providers.js";
import { hashesOf, restoreSnapshot, TreeLoader } from "../../src/workspace/index.js";
import { encodeTree } from "../../src/workspace/tree.js";
import { onStore, STORE_KINDS, type OnStore, type StoreKind, storeText } from "../helpers/both-stores.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";
import { caught } from "../helpers/waiting.js";

const FILE_TEXT = "the amount is 4217 EUR, approved by ann\n";
const SECRET = "sk-live-9fJx2QmT4bWcY8rVpL3nK6sD";

const writer = workflow("keyed-digests", { version: "1" }, async (ctx, input: { amount: number; root: string }) => {
  await ctx.step("write", { effect: true }, () => {
    writeFileSync(join(input.root, "amount.txt"), FILE_TEXT);
    return { wrote: true };
  });
  const got = await ctx.signal<{ amount: number; note: string }>("confirm");
  return { amount: got.amount };
});

const sha256 = (text: string | Buffer): string => createHash("sha256").update(text).digest("hex");
/** The digest an idempotency key's arguments had in the clear: SHA-256 of their canonical JSON. */
const argsDigest = (args: unknown): string => sha256(JSON.stringify(canonical(args)));

/** Every spelling of a SHA-256 (hex) a scan of the store's files looks for. */
function spellings(hex: string): string[] {
  const b = Buffer.from(hex, "hex");
  return [hex, hex.toUpperCase(), b.toString("base64"), b.toString("base64url"), b.toString("latin1")];
}

/** The hashes of each plain thing the run sealed, by what it is. */
interface Sealed {
  [what: string]: string;
}

/** Runs `writer` to the end on `s` with a keyed start and a keyed signal; the SHA-256 of each thing it sealed. */
async function runKeyed(s: OnStore, id: string, ws: string, signalPayload: { amount: number; note: string }): Promise<Sealed> {
  const input = { amount: 4217, root: ws };
  const w = s.stead.worker({ definitions: [writer], ...FAST_WORKER });
  w.start();
  try {
    await s.stead.runs.start(writer, input, { id, workspace: ws, idempotencyKey: `start-${id}` });
    await s.stead.runs.waitFor(id, { timeoutMs: 20_000, until: (r) => r.status === "waiting" });
    await s.stead.runs.signal(id, "confirm", signalPayload, { idempotencyKey: `confirm-${id}` });
    expect((await s.stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
  } finally {
    await w.stop({ graceMs: 500 });
  }
  const sealed: Sealed = {
    "start arguments": argsDigest({ input, id, workspace: ws }),
    "signal arguments": argsDigest({ wait: "confirm", payload: signalPayload }),
    "file content": sha256(FILE_TEXT),
  };
  const snapshots = await s.stead.store.snapshots(id);
  expect(snapshots.length).toBeGreaterThan(1);
  const loader = new TreeLoader(s.stead.store);
  for (const snap of snapshots) {
    const tree = await loader.load(snap.root);
    // The root's plain form is the SHA-256 of the root tree object's text.
    expect(sha256(encodeTree(tree.entries).text)).toBe(tree.hash);
    sealed[`snapshot ${snap.seq}/${snap.source} root`] = tree.hash;
    for (const h of hashesOf(tree)) if (!Object.values(sealed).includes(h)) sealed[`snapshot ${snap.seq} object ${h.slice(0, 8)}`] = h;
  }
  expect(Object.values(sealed)).toContain(sha256(FILE_TEXT));
  return sealed;
}

/** The things of `sealed` whose hash appears in `files`, in any spelling. */
const found = (files: string, sealed: Sealed): string[] => Object.entries(sealed).filter(([, hex]) => spellings(hex).some((x) => files.includes(x))).map(([what]) => what);

async function dumpOf(stead: Stead): Promise<string> {
  const out: string[] = [];
  await stead.admin.exportDump(new Writable({ write: (c: Buffer, _e, done) => (out.push(c.toString()), done()) }));
  return out.join("");
}

describe.each(STORE_KINDS)("keyed digests on %s", (kind: StoreKind) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function encrypted(label: string): Promise<{ s: OnStore; dir: string; keyFile: string }> {
    const keys = tempDir("stead-kd-keys");
    cleanups.push(keys.remove);
    const key = createKeyFile({ dir: keys.dir });
    const s = await onStore(kind, label, { encryption: { key: key.where, keyDir: keys.dir } });
    cleanups.push(() => s.cleanup());
    return { s, dir: keys.dir, keyFile: key.where };
  }

  const workspace = (): string => {
    const t = tempDir("stead-kd-ws");
    cleanups.push(t.remove);
    return t.dir;
  };

  it("an encrypted store holds no SHA-256 of a command's arguments, a file, or a snapshot tree; a plain store shows the same scan finds them", async () => {
    const plain = await onStore(kind, "kd-plain", {});
    cleanups.push(() => plain.cleanup());
    const plainSealed = await runKeyed(plain, "kd-p", workspace(), { amount: 4217, note: "ok" });
    // The scan sees a plain store's digests: the hashes computed here are the ones a store keeps in the clear.
    const plainFound = found(await storeText(plain), plainSealed);
    expect(plainFound).toEqual(expect.arrayContaining(["start arguments", "signal arguments", "snapshot -1/start root"]));

    const { s } = await encrypted("kd-enc");
    const sealed = await runKeyed(s, "kd-e", workspace(), { amount: 4217, note: "ok" });
    expect(found(await storeText(s), sealed)).toEqual([]);
    // Every read of a snapshot finds its tree by the keyed root.
    expect((await s.stead.workspaces.diff("kd-e", "start", "write")).added).toEqual(["amount.txt"]);
    expect((await s.stead.workspaces.entries("kd-e", { step: "write" })).entries.map((e) => e.path)).toEqual(["amount.txt"]);
    expect((await s.stead.workspaces.files("kd-e", { step: "write" })).files.map((f) => f.content)).toEqual([FILE_TEXT]);
    // Repeats are still recognised by the keyed digest, and other arguments refused.
    expect(await s.stead.runs.signal("kd-e", "confirm", { amount: 4217, note: "ok" }, { idempotencyKey: "confirm-kd-e" })).toMatchObject({ already: true });
    expect(await caught(() => s.stead.runs.signal("kd-e", "confirm", { amount: 4218, note: "ok" }, { idempotencyKey: "confirm-kd-e" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
  }, 90_000);

  it("a plain store takes the idempotency digest after redaction: a secret's hash is not stored", async () => {
    const plain = await onStore(kind, "kd-redact", {});
    cleanups.push(() => plain.cleanup());
    const withSecret = { amount: 4217, note: `key ${SECRET}` };
    const sealed = await runKeyed(plain, "kd-r", workspace(), withSecret);
    const files = await storeText(plain);
    expect(files.includes(SECRET)).toBe(false);
    expect(found(files, { "signal arguments": sealed["signal arguments"]! })).toEqual([]);
    expect(await plain.stead.runs.signal("kd-r", "confirm", withSecret, { idempotencyKey: "confirm-kd-r" })).toMatchObject({ already: true });
    expect(await caught(() => plain.stead.runs.signal("kd-r", "confirm", { amount: 1, note: "other" }, { idempotencyKey: "confirm-kd-r" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
  }, 60_000);

  it("a key recorded with the old digest form is recognised until its TTL ends", async () => {
    const { s } = await encrypted("kd-legacy");
    const input = { amount: 1, root: "/nowhere" };
    const first = await s.stead.runs.start(writer, input, { idempotencyKey: "legacy-1" });
    // As an earlier Stead recorded it: the plain SHA-256 of the arguments.
    await s.write("UPDATE idempotency_keys SET digest = ? WHERE key = ?", argsDigest({ input, id: null, workspace: null }), "legacy-1");
    expect(await s.stead.runs.start(writer, input, { idempotencyKey: "legacy-1" })).toEqual({ id: first.id, already: true });
    expect(await caught(() => s.stead.runs.start(writer, { amount: 2, root: "/nowhere" }, { idempotencyKey: "legacy-1" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
    await s.write("UPDATE idempotency_keys SET expires_at = ? WHERE key = ?", 1, "legacy-1");
    const after = await s.stead.runs.start(writer, input, { idempotencyKey: "legacy-1" });
    expect(after.already).toBe(false);
    expect(after.id).not.toBe(first.id);
  }, 60_000);

  it("a snapshot root recorded in the plain form before roots were keyed still restores, and gc keeps its files", async () => {
    const { s } = await encrypted("kd-old-root");
    const ws = workspace();
    await runKeyed(s, "kd-o", ws, { amount: 4217, note: "ok" });
    const last = (await s.stead.store.snapshots("kd-o")).at(-1)!;
    expect(last.root).toMatch(/^keyed:[0-9a-f]{64}$/);
    const plainRoot = (await new TreeLoader(s.stead.store).load(last.root)).hash;
    // As an earlier Stead wrote it: the tree's plain hash.
    await s.write("UPDATE snapshots SET root = ? WHERE run_id = ? AND id = ?", plainRoot, "kd-o", last.id);
    await s.stead.admin.gc({ graceMs: 0 });
    const old = (await s.stead.store.snapshots("kd-o")).at(-1)!;
    expect(old.root).toBe(plainRoot);
    const out = join(workspace(), "out");
    await restoreSnapshot(s.stead.store, old, out);
    expect(readFileSync(join(out, "amount.txt"), "utf8")).toBe(FILE_TEXT);
  }, 60_000);

  it("after an export and an import into a store with another key, repeats are recognised, other arguments refused, and no plain digest appears", async () => {
    const { s, keyFile } = await encrypted("kd-src");
    const ws = workspace();
    const sealed = await runKeyed(s, "kd-x", ws, { amount: 4217, note: "ok" });
    const dump = await dumpOf(s.stead);

    const theirs = tempDir("stead-kd-theirs");
    cleanups.push(theirs.remove);
    const theirKey = createKeyFile({ dir: theirs.dir });
    copyFileSync(keyFile, join(theirs.dir, basename(keyFile)));
    const target = await onStore(kind, "kd-dst", { encryption: { key: theirKey.where, keyDir: theirs.dir } });
    cleanups.push(() => target.cleanup());
    await target.stead.admin.importDump(() => Readable.from([dump]));

    const input = { amount: 4217, root: ws };
    expect(await target.stead.runs.start(writer, input, { id: "kd-x", workspace: ws, idempotencyKey: "start-kd-x" })).toEqual({ id: "kd-x", already: true });
    expect(await caught(() => target.stead.runs.start(writer, { ...input, amount: 1 }, { id: "kd-x", workspace: ws, idempotencyKey: "start-kd-x" }))).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
    expect(await target.stead.runs.signal("kd-x", "confirm", { amount: 4217, note: "ok" }, { idempotencyKey: "confirm-kd-x" })).toMatchObject({ already: true });
    expect(found(await storeText(target), sealed)).toEqual([]);

    // The workspace comes back from the imported store, opened by its own key alone.
    await target.stead.close();
    const opened = createStead({ store: target.location, encryption: { key: theirKey.where, keyDir: tempDir("stead-kd-only").dir } });
    cleanups.push(() => opened.close());
    await opened.ready();
    const last = (await opened.store.snapshots("kd-x")).at(-1);
    const out = join(workspace(), "out");
    await restoreSnapshot(opened.store, last!, out);
    expect(readFileSync(join(out, "amount.txt"), "utf8")).toBe(FILE_TEXT);
  }, 90_000);
});
