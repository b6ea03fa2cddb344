/**
 * Dumps, loaded on first use: a worker or a server that never exports or imports does not pay
 * for this code at start-up (store/transfer/ and the stream modules it needs). The module is the
 * one `require` would load, so its classes are the same (`instanceof VerifiedDump` holds).
 */
type Transfer = typeof import("./index.js");

let loading: Promise<Transfer> | undefined;

export const transfer = (): Promise<Transfer> => (loading ??= import("./index.js"));

/** See export.ts. */
export async function exportStore(...args: Parameters<Transfer["exportStore"]>): ReturnType<Transfer["exportStore"]> {
  return (await transfer()).exportStore(...args);
}

/** See import.ts. */
export async function importStore(...args: Parameters<Transfer["importStore"]>): ReturnType<Transfer["importStore"]> {
  return (await transfer()).importStore(...args);
}

/** See verify.ts. */
export async function verifyStores(...args: Parameters<Transfer["verifyStores"]>): ReturnType<Transfer["verifyStores"]> {
  return (await transfer()).verifyStores(...args);
}
