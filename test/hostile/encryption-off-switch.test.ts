/**
 * Issue 39, item 2: encryption cannot be switched off by writing the database. An encrypted
 * store whose `data_keys` rows were deleted (every key row: the store keeps no other marker) is
 * refused by every opener, one given its key, one that finds it in its key directory, a
 * read-only one, with STEAD_DATA_TAMPERED naming the data key its values were sealed by; nothing
 * is read from it and no plain row is written into it. A sealed value planted in a plain store
 * (a process with no keyring) fails its read with the same code and is never returned as data.
 * Both stores; asserted from the rows in the database.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStead, workflow, type Stead, type SteadOptions } from "../../src/index.js";
import { createKeyFile } from "../../src/store/encryption/key-providers.js";
import { onStore, STORE_KINDS, type OnStore, type StoreKind } from "../helpers/both-stores.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";
import { caught } from "../helpers/waiting.js";

const MARKER = "MARKER-off-switch-7d1c";

const echo = workflow("off-switch", { version: "1" }, async (ctx, input: { note: string }) => {
  const got = await ctx.step("echo", () => ({ echoed: input.note }));
  const answer = await ctx.signal<{ note: string }>("go");
  return { got, answer };
});

/** Runs `echo` on `stead` to the end (a keyed start, a keyed signal). */
async function runEcho(stead: Stead, id: string): Promise<void> {
  const w = stead.worker({ definitions: [echo], ...FAST_WORKER });
  w.start();
  try {
    await stead.runs.start(echo, { note: `${MARKER} ${id}` }, { id, idempotencyKey: `start-${id}` });
    await stead.runs.waitFor(id, { timeoutMs: 20_000, until: (r) => r.status === "waiting" });
    await stead.runs.signal(id, "go", { note: `${MARKER} signal` }, { idempotencyKey: `go-${id}` });
    expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
  } finally {
    await w.stop({ graceMs: 500 });
  }
}

const count = async (s: OnStore, table: string): Promise<number> => Number((await s.rows(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

describe.each(STORE_KINDS)("encryption cannot be switched off by writing the database, on %s", (kind: StoreKind) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("a store whose key rows were deleted is refused by every opener, naming the missing key; nothing is read, nothing plain is written", async () => {
    const keys = tempDir("stead-off-keys");
    cleanups.push(keys.remove);
    const key = createKeyFile({ dir: keys.dir });
    const s = await onStore(kind, "off-switch", { encryption: { key: key.where, keyDir: keys.dir } });
    cleanups.push(() => s.cleanup());
    await runEcho(s.stead, "e-1");
    await runEcho(s.stead, "e-2");
    await s.stead.close();
    const sealedBy = /^\$stead1:([^:]+):/.exec(String((await s.rows("SELECT input FROM runs WHERE id = ?", "e-1"))[0]?.input))?.[1];
    expect(sealedBy, "the run's input is sealed").toBeDefined();
    const before = { runs: await count(s, "runs"), steps: await count(s, "steps"), events: await count(s, "events") };

    // One key row deleted: the store refuses, naming it.
    const keyRows = await s.rows("SELECT id, kek_id, wrapped, created_at FROM data_keys");
    await s.write("DELETE FROM data_keys WHERE id = ?", sealedBy);
    const partly = createStead({ store: s.location, encryption: { key: key.where, keyDir: keys.dir } });
    const lacking = await caught(() => partly.runs.get("e-1"));
    await partly.close();
    expect(lacking).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
    expect((lacking as Error).message).toContain(`data key ${sealedBy!}`);
    expect(await count(s, "data_keys")).toBe(keyRows.length - 1);

    await s.write("DELETE FROM data_keys");

    const openers: [string, Omit<SteadOptions, "store">][] = [
      ["given its key", { encryption: { key: key.where, keyDir: keys.dir } }],
      ["finding its key in the key directory", { encryption: { keyDir: keys.dir } }],
      ["read-only, finding its key", { encryption: { keyDir: keys.dir }, readonly: true }],
      ["with no key at all", { encryption: { keyDir: tempDir("stead-off-none").dir } }],
    ];
    for (const [how, options] of openers) {
      const opened = createStead({ store: s.location, ...options });
      try {
        const read = await caught(() => opened.runs.get("e-1"));
        expect(read, how).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
        expect((read as Error).message, how).toContain(sealedBy!);
        expect((read as Error).message, how).toContain("data_keys");
        expect(JSON.stringify(read), how).not.toContain("$stead1:");
        if (options.readonly) continue;
        expect(await caught(() => opened.runs.start(echo, { note: "written in plain?" }, { id: "plain-1" })), how).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
      } finally {
        await opened.close();
      }
    }

    // Nothing was written: no key set up anew, no run, step or event added, every input still sealed.
    expect(await count(s, "data_keys")).toBe(0);
    expect({ runs: await count(s, "runs"), steps: await count(s, "steps"), events: await count(s, "events") }).toEqual(before);
    for (const r of await s.rows("SELECT input FROM runs")) expect(String(r.input)).toMatch(/^\$stead1:/);
  }, 90_000);

  it("a sealed value read by a process without a keyring fails its read and is never returned as data", async () => {
    const keys = tempDir("stead-off-keys2");
    cleanups.push(keys.remove);
    const key = createKeyFile({ dir: keys.dir });
    const enc = await onStore(kind, "off-sealed-src", { encryption: { key: key.where, keyDir: keys.dir } });
    cleanups.push(() => enc.cleanup());
    await runEcho(enc.stead, "s-1");
    const sealedInput = String((await enc.rows("SELECT input FROM runs WHERE id = ?", "s-1"))[0]?.input);
    const sealedEvent = String((await enc.rows("SELECT data FROM events WHERE run_id = ? AND data LIKE ? ORDER BY seq", "s-1", '%"$sealed"%'))[0]?.data);
    expect(sealedInput).toMatch(/^\$stead1:/);
    expect(sealedEvent).toContain("$sealed");

    const plain = await onStore(kind, "off-sealed-plain", { encryption: { keyDir: tempDir("stead-off-none2").dir } });
    cleanups.push(() => plain.cleanup());
    await runEcho(plain.stead, "p-0");
    await runEcho(plain.stead, "p-1");
    await runEcho(plain.stead, "p-2");
    // Sealed values planted in a run between the first and the last (which stay plain): the store opens.
    await plain.write("UPDATE runs SET output = ? WHERE id = ?", sealedInput, "p-1");
    await plain.write("UPDATE steps SET output = ? WHERE run_id = ?", sealedInput, "p-1");
    await plain.write("UPDATE idempotency_keys SET result = ? WHERE key = ?", sealedInput, "go-p-1");
    const [event] = await plain.rows("SELECT seq FROM events WHERE run_id = ? AND type = ? ORDER BY seq", "p-1", "run.created");
    await plain.write("UPDATE events SET data = ? WHERE seq = ?", sealedEvent, event!.seq);

    const reader = createStead({ store: plain.location, encryption: { keyDir: tempDir("stead-off-none3").dir } });
    cleanups.push(() => reader.close());
    const reads: [string, () => Promise<unknown>][] = [
      ["run", () => reader.runs.get("p-1")],
      ["journal", () => reader.store.journal("p-1")],
      ["events", () => reader.store.events({ runId: "p-1" })],
      ["idempotency key", () => reader.runs.signal("p-1", "go", { note: `${MARKER} signal` }, { idempotencyKey: "go-p-1" })],
    ];
    for (const [what, read] of reads) {
      const e = await caught(read);
      expect(e, what).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
      expect(JSON.stringify(e), what).not.toContain("$stead1:");
    }
    // The plain run beside them reads as before.
    expect((await reader.runs.get("p-2")).output).toMatchObject({ got: { echoed: `${MARKER} p-2` } });
  }, 90_000);
});
