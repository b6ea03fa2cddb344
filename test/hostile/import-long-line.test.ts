/**
 * Issue 39, item 11: reading a dump is linear in its length, whatever the length of one line. A
 * workspace file is one blob row, one line of the dump (megabytes of base64); the reader used to
 * append each chunk to the line so far and search the whole of it again for its end, so a 64 MiB
 * line took minutes.
 *
 * Asserted without a clock: while a dump is imported, every search for a line end ("\n", as text
 * or as a byte) is counted with the length it was asked to scan. A linear reader scans each byte
 * of the dump about once per read (an import reads it twice: to check it, then to write it); the
 * old reader scanned the line so far at every chunk, tens of times the dump's size here.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { VerifiedDump } from "../../src/store/transfer/index.js";
import { STORE_KINDS, onStore } from "../helpers/both-stores.js";
import { FAST_FOLLOW, tempDir } from "../helpers/temp-store.js";

const FILE_BYTES = 4 * 1024 * 1024;

const writeBig = workflow("long-line", { version: "1" }, async (ctx, root: string) => {
  await ctx.step("write", { effect: true }, () => writeFileSync(join(root, "big.bin"), randomBytes(FILE_BYTES)));
  return "written";
});

/** Characters (or bytes) that searches for a line end were asked to scan while `fn` ran. */
async function lineEndScans<T>(fn: () => Promise<T>): Promise<{ value: T; scanned: number; searches: number }> {
  type IndexOf = (this: { length: number }, needle: unknown, from?: unknown, encoding?: unknown) => number;
  const protos = [String.prototype, Buffer.prototype] as unknown as { indexOf: IndexOf }[];
  const originals = protos.map((p) => p.indexOf);
  let scanned = 0;
  let searches = 0;
  // Only searches over at least 16 KiB: a reader's chunks are 64 KiB, and nothing else here searches that much text.
  const count = (length: number, needle: unknown, from: unknown) => {
    if (length < 16 * 1024 || !(needle === "\n" || needle === 10 || (Buffer.isBuffer(needle) && needle.length === 1 && needle[0] === 10))) return;
    const start = typeof from === "number" ? (from < 0 ? Math.max(0, length + from) : from) : 0;
    scanned += Math.max(0, length - start);
    searches++;
  };
  protos.forEach((proto, i) => {
    const original = originals[i] as IndexOf;
    proto.indexOf = function (this: { length: number }, needle: unknown, from?: unknown, encoding?: unknown): number {
      count(this.length, needle, from);
      return original.call(this, needle, from, encoding);
    };
  });
  try {
    return { value: await fn(), scanned, searches };
  } finally {
    protos.forEach((proto, i) => (proto.indexOf = originals[i] as IndexOf));
  }
}

describe("a dump holding a workspace file of 4 MiB (one line of about 5.6 MB)", () => {
  let dir: { dir: string; remove: () => void };
  let dump = "";
  let content: Buffer;

  beforeAll(async () => {
    dir = tempDir("stead-long-line-");
    const ws = join(dir.dir, "ws");
    mkdirSync(ws);
    const stead = createStead({ store: join(dir.dir, "source.db") });
    try {
      expect((await stead.run(writeBig, ws, { id: "big", workspace: ws, ...FAST_FOLLOW })).status).toBe("completed");
      content = readFileSync(join(ws, "big.bin"));
      dump = join(dir.dir, "source.dump");
      const out = createWriteStream(dump);
      await stead.admin.exportDump(out);
      await new Promise<void>((resolve, reject) => out.end(() => resolve()).once("error", reject));
    } finally {
      await stead.close();
    }
    const longest = Math.max(...readFileSync(dump, "utf8").split("\n").map((l) => l.length));
    expect(longest).toBeGreaterThan(FILE_BYTES);
  }, 60_000);

  afterAll(() => dir.remove());

  it("is checked scanning each byte about once", async () => {
    const size = statSync(dump).size;
    const { value: verified, scanned } = await lineEndScans(() => VerifiedDump.from(() => createReadStream(dump), dump));
    await verified.dispose();
    expect(verified.tables.blobs.rows).toBeGreaterThan(0);
    expect(scanned / size, `${scanned} characters scanned for line ends in a dump of ${size} bytes`).toBeLessThan(1.5);
  });

  it.each(STORE_KINDS)("imports into %s scanning each byte about once per read, and the file restores byte for byte", async (kind) => {
    const target = await onStore(kind, "long-line");
    try {
      const size = statSync(dump).size;
      const { scanned } = await lineEndScans(() => target.stead.admin.importDump(() => createReadStream(dump)));
      // Two reads: one to check the dump, one to write its rows.
      expect(scanned / size, `${scanned} characters scanned for line ends in a dump of ${size} bytes`).toBeLessThan(2.5);
      const to = join(dir.dir, `restored-${kind}`);
      await target.stead.workspaces.restore("big", { to });
      expect(readFileSync(join(to, "big.bin")).equals(content)).toBe(true);
    } finally {
      await target.cleanup();
    }
  }, 60_000);
});
