/**
 * Reading a dump whose longest line is a 10 MB workspace file (one blob row: about 13 MB of
 * base64), on the built library: `VerifiedDump.from`, which reads the dump to its end, splits its
 * lines, parses and digests every row and checks the trailer; against reading the same file's
 * bytes to their end. A reader that scanned a line again for every chunk (the old one) grows
 * with the square of that line's length: at 10 MB it took seconds against milliseconds.
 */
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { stead as lib } from "./lib.js";

const transfer = (await import(pathToFileURL(resolve(import.meta.dirname, "../dist/store/transfer/index.js")).href)) as typeof import("../src/store/transfer/index.js");

export const FILE_BYTES = 10_000_000;

/** A dump of a store with one run whose workspace holds one file of FILE_BYTES random bytes. */
export async function dumpWithBigFile(dir: string): Promise<{ dump: string; bytes: number }> {
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const big = lib.workflow("bench-big-file", { version: "1" }, async (ctx, root: string) => {
    await ctx.step("write", { effect: true }, () => writeFileSync(join(root, "big.bin"), randomBytes(FILE_BYTES)));
    return "written";
  });
  const stead = lib.createStead({ store: join(dir, "source.db") });
  try {
    const run = await stead.run(big, ws, { id: "big", workspace: ws, pollMs: 20 });
    if (run.status !== "completed") throw new Error(`the bench's run ended ${run.status}`);
    const dump = join(dir, "big.dump");
    const out = createWriteStream(dump);
    await stead.admin.exportDump(out);
    await new Promise<void>((done, fail) => out.once("error", fail).end(() => done()));
    return { dump, bytes: statSync(dump).size };
  } finally {
    await stead.close();
  }
}

/** ms to read the file's bytes to their end, as the dump reader's stream does. */
export async function readBytesMs(file: string): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  for await (const chunk of createReadStream(file)) n += (chunk as Buffer).length;
  if (n === 0) throw new Error(`${file} is empty`);
  return performance.now() - t0;
}

/** ms to read and check the dump whole (lines, rows, digests, trailer). */
export async function verifyDumpMs(file: string): Promise<number> {
  const t0 = performance.now();
  const dump = await transfer.VerifiedDump.from(() => createReadStream(file), file);
  const ms = performance.now() - t0;
  await dump.dispose();
  if (dump.tables.blobs.rows === 0) throw new Error("the bench's dump holds no blob");
  return ms;
}

/** ms to import the dump into a new SQLite store at `store` (checked read, writes, read back). */
export async function importDumpMs(file: string, store: string): Promise<number> {
  const stead = lib.createStead({ store });
  try {
    await stead.ready();
    const t0 = performance.now();
    await stead.admin.importDump(() => createReadStream(file));
    return performance.now() - t0;
  } finally {
    await stead.close();
  }
}
