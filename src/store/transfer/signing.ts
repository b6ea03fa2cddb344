/**
 * Signatures of the dumps and backups of encrypted stores. Row counts and SHA-256 sums detect
 * damage, not edits: whoever edits a dump or a backup computes them again. An encrypted store's
 * dump (its trailer) and backup (its record) also carry a signature: a keyed digest, under a key
 * derived from the store's own keys (encryption/keyring.ts, purpose "dump signature"), of its
 * tables' keyed sums and of what says how to read them (a dump's header line; a backup's source,
 * time and schema). Only a holder of the store's key can make one that checks.
 *
 * A plain store has no key to sign with: its dumps and backups are not signed.
 */
import { timingSafeEqual } from "node:crypto";
import type { KeyedDigest } from "../types.js";
import type { StoreDigest } from "./digest.js";

/** What a backup's signature covers besides its tables. */
export interface BackupMeta {
  source: string;
  takenAt: number;
  schemaVersion: number;
}

/** A dump's signature: its header line exactly as written, and its tables' keyed sums. */
export function dumpSignature(keyed: KeyedDigest, headerLine: string, keyedTables: StoreDigest): string {
  return keyed(`dump\0${JSON.stringify({ header: headerLine, tables: keyedTables })}`);
}

/** A backup's signature: what it records about itself, and its tables' keyed sums. */
export function backupSignature(keyed: KeyedDigest, meta: BackupMeta, keyedTables: StoreDigest): string {
  return keyed(`backup\0${JSON.stringify({ source: meta.source, takenAt: meta.takenAt, schemaVersion: meta.schemaVersion, tables: keyedTables })}`);
}

/** Whether `given` is the signature expected (compared in constant time: how far a guess matched is not told). */
export function signatureMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given, "utf8"), Buffer.from(expected, "utf8"));
}
