import { once } from "node:events";
import type { Writable } from "node:stream";
import { SteadError } from "../../errors.js";
import { TRANSFER_TABLES, type DataKeys, type DumpSigner, type RunReads, type StoreLifecycle, type TransferRows, type TransferTable } from "../types.js";
import { DEFAULT_PAGE_ROWS, digestDifferences, digestStore, pagesOf, TableDigester, type StoreDigest } from "./digest.js";
import { DIGEST_NAME, DUMP_VERSION, PLAIN_DUMP_VERSION, TRAILER_VERSION, type DumpHeader, type DumpTrailer } from "./dump-format.js";
import { TRANSFER_SCHEMA_VERSION } from "./tables.js";
import { dumpSignature } from "./signing.js";
import { everyRun } from "../run-sets.js";

export interface ExportOptions {
  /** Rows per `readRows` page. */
  pageRows?: number;
  /**
   * Export even while a worker holds a live lease. The dump is then whatever the pages read, not
   * one moment of the store, and the worker may go on writing to the old store after it.
   */
  allowLive?: boolean;
  /**
   * Whether the process that holds a lease is certainly gone (its caller knows how to tell: the
   * store does not). Such a lease is not live: that process will write nothing more.
   */
  ownerIsDead?: (owner: { host: string | null; pid: number | null; start: string | null }) => boolean;
  /** Signs an encrypted store's dump (default: the store's own, which its encryption layer gives). */
  signer?: DumpSigner;
}

export interface ExportSummary {
  source: string;
  schema: number;
  tables: StoreDigest;
}

/**
 * Writes every row of `store` to `out` as a dump (see dump-format.ts). Does not end `out`.
 *
 * The store is read twice: once for the header's counts, once for the rows. If the two reads
 * disagree, something wrote to the store meanwhile: the trailer is not written (so the partial
 * dump can never be imported) and the export fails.
 *
 * Rows are written as the store holds them: an encrypted store's values stay sealed, its data
 * keys go in the header, wrapped as the store keeps them (no key is ever written in the clear),
 * and its trailer carries a signature made with them (signing.ts).
 */
export async function exportStore(store: StoreLifecycle & RunReads & TransferRows & Pick<DataKeys, "dataKeys"> & { dumpSigner?: DumpSigner }, out: Writable, options: ExportOptions = {}): Promise<ExportSummary> {
  const pageRows = options.pageRows ?? DEFAULT_PAGE_ROWS;
  const info = await store.check();
  // readRows asks for every column of this schema: an older store lacks some.
  if (info.schemaVersion < TRANSFER_SCHEMA_VERSION) {
    throw new SteadError("STEAD_INVALID_STATE", `the store at ${store.location} is at schema version ${info.schemaVersion}; this Stead exports version ${TRANSFER_SCHEMA_VERSION}`, {
      fix: "run `stead migrate` on it first (or export it with the Stead that wrote it)",
    });
  }
  if (!options.allowLive) await refuseLiveLeases(store, options.ownerIsDead ?? (() => false));
  const keys = await store.dataKeys();
  const signer = options.signer ?? store.dumpSigner;
  if (keys.length > 0 && !signer) {
    throw new SteadError("STEAD_BAD_OPTION", `the store at ${store.location} is encrypted, and was opened without the encryption layer that signs its dump`, {
      fix: "export it through Stead (`stead export`, or exportDump on createStead's instance)",
    });
  }
  const keyed = keys.length > 0 && signer ? await signer(keys, store.location) : undefined;
  const counted = await digestStore(store, pageRows);
  const header: DumpHeader = {
    "stead-export": keys.length > 0 ? DUMP_VERSION : PLAIN_DUMP_VERSION,
    schema: info.schemaVersion,
    source: store.dialect,
    digest: DIGEST_NAME,
    tables: Object.fromEntries(TRANSFER_TABLES.map((t) => [t, counted[t].rows])) as Record<TransferTable, number>,
    ...(keys.length > 0 ? { keys } : {}),
  };
  const headerLine = JSON.stringify(header);
  await write(out, `${headerLine}\n`);
  const written = {} as StoreDigest;
  const signed = {} as StoreDigest;
  for (const table of TRANSFER_TABLES) {
    const d = new TableDigester();
    const k = new TableDigester(keyed);
    for await (const page of pagesOf(store, table, pageRows)) {
      let chunk = "";
      for (const row of page) {
        const json = JSON.stringify(row);
        d.add(json);
        if (keyed) k.add(json);
        chunk += `{"t":${JSON.stringify(table)},"r":${json}}\n`;
      }
      await write(out, chunk);
    }
    written[table] = d.digest();
    signed[table] = k.digest();
  }
  const changed = digestDifferences(counted, written, "the first read", "the second");
  // A rotation meanwhile may have sealed rows by a key the header lacks.
  if (JSON.stringify(await store.dataKeys()) !== JSON.stringify(keys)) changed.push("data_keys: the store's keys changed (a rotation)");
  if (changed.length > 0) {
    throw new SteadError("STEAD_INVALID_STATE", `the store at ${store.location} changed during the export (${changed.join("; ")}); the dump was left without its trailer`, {
      fix: "stop every worker and command using the store, then export again",
    });
  }
  const trailer: DumpTrailer = { "stead-export-end": TRAILER_VERSION, tables: written, ...(keyed ? { signature: dumpSignature(keyed, headerLine, signed) } : {}) };
  await write(out, `${JSON.stringify(trailer)}\n`);
  return { source: store.dialect, schema: info.schemaVersion, tables: written };
}

/**
 * A worker holding a live lease may commit after its rows were read: those writes would be left
 * behind in the old store. Lease times are compared with this process's clock, which for a shared
 * store is close to, not exactly, the store's own.
 */
async function refuseLiveLeases(store: StoreLifecycle & RunReads, ownerIsDead: NonNullable<ExportOptions["ownerIsDead"]>): Promise<void> {
  const now = Date.now();
  const live = (await everyRun(store, { status: ["running"] })).filter(
    (r) => r.leaseOwner !== null && (r.leaseExpiresAt ?? 0) > now && !ownerIsDead({ host: r.ownerHost, pid: r.ownerPid, start: r.ownerStart }),
  );
  const first = live[0];
  if (!first) return;
  throw new SteadError(
    "STEAD_INVALID_STATE",
    `${live.length} run(s) of ${store.location} are running under a live lease (run ${first.id}, worker ${first.leaseOwner ?? "?"}${first.ownerHost ? ` on ${first.ownerHost}` : ""}): an export now would miss their next steps`,
    { runId: first.id, fix: "stop the workers first (a stopped worker hands its runs back), then export again" },
  );
}

/** Writes `chunk`, waiting for `out` to drain when its buffer is full; rejects if `out` fails. */
async function write(out: Writable, chunk: string): Promise<void> {
  if (out.errored) throw out.errored;
  if (out.writableEnded || out.destroyed) throw new Error("the export's output stream was closed before the export ended");
  if (out.write(chunk)) return;
  const stop = new AbortController();
  try {
    const ended = await Promise.race([
      once(out, "drain", { signal: stop.signal }).then(() => false),
      once(out, "close", { signal: stop.signal }).then(() => true),
    ]);
    if (ended) throw out.errored ?? new Error("the export's output stream was closed before the export ended");
  } finally {
    stop.abort();
  }
}
