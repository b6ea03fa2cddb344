/**
 * Dumps as a skin handles them. Reading and verifying a dump touches no store, so a skin reads
 * one whole before it opens the store to import into (a bad dump then creates nothing; nor does
 * an encrypted one whose key this process lacks, or which was edited).
 */
import { dumpSignerOf } from "../store/encryption/keyring.js";
import { VerifiedDump, type DumpInput } from "../store/transfer/index.js";
import type { DumpSigner } from "../store/types.js";
import { CheckedBackup } from "./backup.js";
import { keyChainFor, type EncryptionOptions } from "./stead.js";

export { VerifiedDump } from "../store/transfer/index.js";
/** Removes this process's private temp copies (an import's spool, a restore's copy of its backup): for a skin ending itself on a signal. */
export { removePrivateTempDirsSync } from "../store/transfer/index.js";
export type { DumpInput, ExportSummary, ImportSummary, StoreDigest } from "../store/transfer/index.js";

/**
 * Checks the signatures of encrypted dumps and backups with the keys `createStead` would find
 * for `encryption` (default: STEAD_ENCRYPTION_KEY(_FILE) and the key directory).
 */
export function dumpSigner(encryption?: EncryptionOptions): DumpSigner {
  return dumpSignerOf(keyChainFor(encryption));
}

/** Reads a dump whole and checks it (an encrypted one's signature with the keys `encryption` finds), touching no store. */
export function readDump(input: DumpInput, name: string, encryption?: EncryptionOptions): Promise<VerifiedDump> {
  return VerifiedDump.from(input, name, { signer: dumpSigner(encryption) });
}

/** Opens a backup file and checks it (an encrypted store's signature with the keys `encryption` finds), touching no store. */
export function openBackup(file: string, encryption?: EncryptionOptions): Promise<CheckedBackup> {
  return CheckedBackup.open(file, { signer: dumpSigner(encryption) });
}
