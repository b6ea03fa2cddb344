/**
 * How a blob's bytes are stored: one marker byte, then the content raw (0) or deflated (1).
 * Content that does not shrink by compression is kept raw, so incompressible files cost their
 * size plus one byte and are never inflated on restore.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { SteadError } from "../errors.js";
import { sha256 } from "./tree.js";

const RAW = 0;
const DEFLATE = 1;

export function encodeBlob(content: Uint8Array): Buffer {
  if (content.byteLength >= 64) {
    const packed = deflateRawSync(content, { level: 6 });
    if (packed.byteLength < content.byteLength * 0.95) return Buffer.concat([Buffer.of(DEFLATE), packed]);
  }
  return Buffer.concat([Buffer.of(RAW), content]);
}

/** The content of a stored blob, checked against its hash (a damaged blob is never restored). */
export function decodeBlob(hash: string, data: Buffer): Buffer {
  const content = blobContent(hash, data);
  if (sha256(content) !== hash) throw damaged(hash, "its content does not match its hash");
  return content;
}

/** The content of a stored blob, unchecked: the caller checks it (`name` names the blob in errors). */
export function blobContent(name: string, data: Buffer): Buffer {
  const marker = data[0];
  try {
    if (marker === RAW) return data.subarray(1);
    if (marker === DEFLATE) return inflateRawSync(data.subarray(1));
    throw new Error(`unknown blob format ${String(marker)}`);
  } catch (e) {
    throw damaged(name, e instanceof Error ? e.message : String(e));
  }
}

export function damaged(hash: string, why: string): SteadError {
  return new SteadError("STEAD_SNAPSHOT_DAMAGED", `workspace blob ${hash.slice(0, 12)} is damaged (${why})`, {
    fix: "the store holds a damaged snapshot; restore another snapshot of the run",
  });
}
