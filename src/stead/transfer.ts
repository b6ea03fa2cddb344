/**
 * Dumps as a skin handles them. Reading and verifying a dump touches no store, so a skin reads
 * one whole before it opens the store to import into (a bad dump then creates nothing).
 */
export { VerifiedDump } from "../store/transfer/index.js";
export type { DumpInput, ExportSummary, ImportSummary, StoreDigest } from "../store/transfer/index.js";
