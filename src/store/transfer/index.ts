/** Moving a store: dumps (`stead export` / `stead import`) and comparing two stores of any dialects. */
export { exportStore } from "./export.js";
export type { ExportOptions, ExportSummary } from "./export.js";
export { importStore, VerifiedDump } from "./import.js";
export type { DumpInput, ImportOptions, ImportSummary, ImportTarget, VerifyOptions } from "./import.js";
export { backupSignature, signatureMatches } from "./signing.js";
export { verifyStores } from "./verify.js";
export { privateTempDir, removePrivateTempDirsSync } from "./private-temp.js";
export type { PrivateTempDir } from "./private-temp.js";
export type { StoreComparison } from "./verify.js";
export { digestDifferences, digestStore } from "./digest.js";
export type { StoreDigest, TableDigest } from "./digest.js";
export { DUMP_VERSION } from "./dump-format.js";
export type { DumpHeader, DumpTrailer } from "./dump-format.js";
export { NOT_TRANSFERRED, TABLE_SCHEMAS, TRANSFER_SCHEMA_VERSION } from "./tables.js";
