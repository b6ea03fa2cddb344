/**
 * A snapshot as a gzipped tar (POSIX ustar, with pax records for what ustar cannot hold: a path
 * or link target over 100 bytes or not ASCII), streamed: one file's content in memory at a time.
 *
 * Invariant: every entry's path is relative with no "." or ".." name (SnapshotEntries promises it,
 * and `header` refuses anything else), so extracting the archive writes only under the directory
 * it is extracted in. A link is written as the link it was (its target recorded, never followed):
 * no entry of a snapshot lies under a link, so no later entry writes through one.
 */
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import type { SnapshotEntries, SnapshotEntry } from "../workspace/index.js";

const BLOCK = 512;
/** The largest size ustar's 11 octal digits hold; a larger file's size goes in a pax record. */
const USTAR_MAX_SIZE = 0o77777777777;

const ascii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s);

function writeString(h: Buffer, offset: number, length: number, value: string): void {
  h.write(value, offset, length, "utf8");
}

function writeOctal(h: Buffer, offset: number, length: number, value: number): void {
  h.write(`${Math.floor(value).toString(8).padStart(length - 1, "0")}\0`, offset, length, "ascii");
}

/** A pax extended header's records: each `<length> <key>=<value>\n`, the length counting itself. */
function paxRecords(fields: Record<string, string>): Buffer {
  let out = "";
  for (const [k, v] of Object.entries(fields)) {
    const body = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(body) + 1;
    while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
    out += `${len}${body}`;
  }
  return Buffer.from(out, "utf8");
}

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);

interface Header {
  name: string;
  type: "0" | "2" | "5" | "x";
  mode: number;
  size: number;
  mtimeS: number;
  link?: string;
}

function ustar(o: Header): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, o.name);
  writeOctal(h, 100, 8, o.mode & 0o7777);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  writeOctal(h, 124, 12, o.size);
  writeOctal(h, 136, 12, o.mtimeS);
  h.fill(0x20, 148, 156);
  h.write(o.type, 156, 1, "ascii");
  if (o.link !== undefined) writeString(h, 157, 100, o.link);
  h.write("ustar\0", 257, 6, "ascii");
  h.write("00", 263, 2, "ascii");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return h;
}

/** The header blocks of one entry (a pax header first when needed). */
export function header(e: SnapshotEntry, mtimeS: number): Buffer {
  if (e.path === "" || e.path.startsWith("/") || e.path.split("/").some((n) => n === "" || n === "." || n === "..")) {
    throw new Error(`refusing a tar entry that is not a relative path inside the archive: ${JSON.stringify(e.path.slice(0, 100))}`);
  }
  const name = e.kind === "dir" ? `${e.path}/` : e.path;
  const size = e.kind === "file" ? e.size : 0;
  const link = e.kind === "link" ? e.target : undefined;
  const pax: Record<string, string> = {};
  if (Buffer.byteLength(name) > 100 || !ascii(name)) pax.path = name;
  if (link !== undefined && (Buffer.byteLength(link) > 100 || !ascii(link))) pax.linkpath = link;
  if (size > USTAR_MAX_SIZE) pax.size = String(size);
  const main = ustar({
    name: pax.path === undefined ? name : name.replace(/[^\x20-\x7e]/g, "_").slice(0, 99),
    type: e.kind === "dir" ? "5" : e.kind === "link" ? "2" : "0",
    // Never setuid or setgid: tar run by root restores them, and every entry is owned by uid 0.
    mode: e.kind === "link" ? 0o777 : e.mode & ~0o6000,
    size: pax.size === undefined ? size : 0,
    mtimeS,
    ...(link !== undefined ? { link: pax.linkpath === undefined ? link : "" } : {}),
  });
  if (Object.keys(pax).length === 0) return main;
  const records = paxRecords(pax);
  return Buffer.concat([ustar({ name: "PaxHeader", type: "x", mode: 0o644, size: records.length, mtimeS }), records, padding(records.length), main]);
}

async function* tarBlocks(snapshot: SnapshotEntries, createdAtMs: number): AsyncGenerator<Buffer> {
  const created = Math.floor(createdAtMs / 1000);
  for (const e of snapshot.entries) {
    yield header(e, e.kind === "file" ? Math.floor(e.mtime / 1000) : created);
    if (e.kind !== "file") continue;
    const content = await snapshot.read(e);
    yield content;
    yield padding(content.length);
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** The snapshot as a gzipped tar, read as it is sent. `onError` hears a failure after the first byte (the response is then cut short). */
export function tarballStream(snapshot: SnapshotEntries, createdAtMs: number, onError: (e: unknown) => void): ReadableStream<Uint8Array> {
  const gzip = createGzip();
  const source = Readable.from(tarBlocks(snapshot, createdAtMs));
  source.on("error", (e) => {
    onError(e);
    gzip.destroy(e instanceof Error ? e : new Error(String(e)));
  });
  return Readable.toWeb(source.pipe(gzip)) as ReadableStream<Uint8Array>;
}
