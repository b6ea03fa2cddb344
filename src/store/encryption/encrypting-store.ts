/**
 * A store whose payloads are encrypted at rest (see cipher.ts for the format, sealed-values.ts for
 * what each value is bound to): writes are sealed before they reach the store, reads opened after.
 * Encrypted: runs' input, output and error; steps' output, error and checkpoint metadata; waits'
 * requests and results; holds' reasons and details; event data (but `step` and `attempt`, and a
 * step's completion, which holds only what the steps table keeps in the clear); control
 * commands' recorded arguments and results; snapshots' notes and checkpoint metadata; workspace
 * blobs, kept under a keyed address (keyring.ts). Keyed, not plain: each snapshot's root
 * (keyed-roots.ts) and each control command's idempotency digest (`argsDigest`), since a plain
 * hash of sealed content confirms a guess of it. In the clear: ids, names, kinds, statuses, times,
 * counts and sizes (what the store filters, sorts and joins on), and the store's own lease events.
 *
 * Invariant: the caller's objects are never changed (the redacting store above relies on handing
 * the engine what it wrote). A plain store's writes pass through untouched and its reads are only
 * checked: a sealed value there (its key rows deleted) fails its read, never returned as data. The
 * keyring is read by `migrate`/`check` (Stead calls one before anything else) and refused there if
 * missing, or if the store's runs are sealed and it has no key rows (keyring.ts).
 */
import { SteadError } from "../../errors.js";
import type {
  BlobRow,
  DataKeyRow,
  BlobWrite,
  ClaimedRun,
  EventRow,
  EventWrite,
  IdempotencyRow,
  IdempotencyWrite,
  Mutation,
  NewRun,
  RetentionOptions,
  RunRow,
  StepWrite,
  Store,
  Unit,
} from "../types.js";
import { DATA_KEYS_VERSION } from "../schema/tables.js";
import { isSealedBytes, isSealedText, openBytes, openText, sealBytes, sealedBytesKeyId, sealedKeyId, sealText, SealError } from "./cipher.js";
import type { KeyChain } from "./key-providers.js";
import { adoptedKeys, dumpSignerOf, openKeyring, type Keyring } from "./keyring.js";
import { isKeyedRoot, keyedRoot, keyedRootAddress } from "./keyed-roots.js";
import { plainDigest } from "../args-digest.js";
import { layeredStore, type LayerDecisions, type Wrapped } from "../layered-store.js";
import type { KeyAdoption } from "../ports/data-keys.js";
import { openListedHold, openListedRun, openListedSession, openListedWait } from "./listed-rows.js";
import { at, CLEAR_EVENT_FIELDS, isClearEvent, openEvent, openHold, openRun, openSnapshot, openStep, openWait, plainEvent, SEALED_FIELD, type Opener } from "./sealed-values.js";

export interface EncryptingStore extends Store, KeyAdoption {
  /** The keyring once read; null for a plain store (or before migrate/check). */
  readonly keyring: Keyring | null;
  /** Reads the store's keys again (a restore that brought an encrypted store's keys into this one). */
  reloadKeys(): Promise<void>;
}

function tampered(aad: string, e: unknown): SteadError {
  const [table, ...rest] = aad.split("|");
  const column = rest.pop();
  const why =
    e instanceof SealError
      ? e.failure === "not sealed"
        ? "holds plain text where the store keeps only encrypted values"
        : e.failure === "unknown key"
          ? `was sealed by data key ${e.keyId ?? "?"}, which the store does not have`
          : "does not authenticate: its bytes were changed, or it was moved from another row or column"
      : String(e);
  return new SteadError("STEAD_DATA_TAMPERED", `the encrypted ${column ?? "value"} of ${table ?? "?"} row ${rest.join("/")} ${why}; nothing was read from it`, {
    fix: "restore the store (or that row) from a backup",
  });
}

const notSealed = (aad: string): SteadError => tampered(aad, new SealError("not sealed"));

/** A sealed value where the store holds no key: sealed by a key whose row is gone. */
const sealedWithoutKey = (aad: string, value: string): SteadError => tampered(aad, new SealError("unknown key", sealedKeyId(value) ?? "?"));

/** The opener of a store without keys: a plain value is returned as it is; a sealed one is never returned. */
const refuseSealed: Opener = (value, aad) => {
  if (value !== null && isSealedText(value)) throw sealedWithoutKey(aad, value);
  return value;
};

function plainBlob(b: BlobRow): BlobRow {
  if (isSealedBytes(b.data)) throw tampered(`blobs|${b.hash}|data`, new SealError("unknown key", sealedBytesKeyId(b.data)));
  return b;
}

/** A blob's address: a snapshot's keyed root names one itself; a content hash is keyed here. */
const addressOf = (r: Keyring, hash: string): string => (isKeyedRoot(hash) ? keyedRootAddress(hash) : r.blobAddress(hash));

/** How a keyed idempotency digest is spelt, apart from the plain SHA-256 hex of the form before it. */
const KEYED_ARGS = "hmac:";

function openIdempotency(o: Opener, k: IdempotencyRow): IdempotencyRow {
  const summary = o(k.summary, at.idempotency(k.verb, k.scope, k.key, "summary"));
  const result = o(k.result, at.idempotency(k.verb, k.scope, k.key, "result"));
  return summary === k.summary && result === k.result ? k : { ...k, summary, result };
}

function claimed(o: Opener, c: ClaimedRun): ClaimedRun {
  const run = openRun(o, c.run);
  const journal = c.journal.map((s) => openStep(o, s));
  return run === c.run && journal.every((s, i) => s === c.journal[i]) ? c : { ...c, run, journal };
}

class Sealer {
  constructor(private readonly ring: Keyring) {}

  seal<T extends string | null | undefined>(value: T, aad: string): T {
    return (typeof value === "string" ? sealText(this.ring.active, value, aad) : value) as T;
  }

  readonly open: Opener = (value, aad) => {
    if (value === null) return value;
    try {
      return openText(this.ring.keys, value, aad) as typeof value;
    } catch (e) {
      throw tampered(aad, e);
    }
  };

  step(runId: string, s: StepWrite): StepWrite {
    return { ...s, output: this.seal(s.output, at.step(runId, s.seq, "output")), error: this.seal(s.error, at.step(runId, s.seq, "error")), checkpoint: this.seal(s.checkpoint, at.step(runId, s.seq, "checkpoint")) };
  }

  run(r: NewRun): NewRun {
    const out: NewRun = { ...r, input: this.seal(r.input, at.run(r.id, "input")) };
    if (r.journal) out.journal = r.journal.map((s) => this.step(r.id, s));
    return out;
  }

  events(runId: string, events: readonly EventWrite[]): EventWrite[] {
    return events.map((e) => {
      if (isClearEvent(e.type, e.data)) return e;
      const data: Record<string, unknown> = { [SEALED_FIELD]: sealText(this.ring.active, JSON.stringify(e.data ?? {}), at.event(runId, e.type)) };
      for (const f of CLEAR_EVENT_FIELDS) if (e.data && f in e.data) data[f] = e.data[f];
      return { ...e, data };
    });
  }

  idempotency(k: IdempotencyWrite): IdempotencyWrite {
    return { ...k, summary: this.seal(k.summary, at.idempotency(k.verb, k.scope, k.key, "summary")), result: this.seal(k.result, at.idempotency(k.verb, k.scope, k.key, "result")) };
  }

  mutation(m: Mutation): Mutation {
    const id = m.runId;
    const out: Mutation = { ...m };
    if (m.run) out.run = { ...m.run, output: this.seal(m.run.output, at.run(id, "output")), error: this.seal(m.run.error, at.run(id, "error")) };
    if (m.steps) out.steps = m.steps.map((s) => this.step(id, s));
    if (m.waits) out.waits = m.waits.map((w) => ({ ...w, request: this.seal(w.request, at.waitRequest(id, w.name)) }));
    if (m.resolveWaits) {
      // A wait's result is sealed as its step's output, bound to the position the resolver names.
      out.resolveWaits = m.resolveWaits.map((w) => {
        if (typeof w.result !== "string") return w;
        if (w.seq === undefined) throw unplacedAnswer(id, w.name);
        return { ...w, result: this.seal(w.result, at.step(id, w.seq, "output")) };
      });
    }
    if (m.holds) out.holds = m.holds.map((h) => ({ ...h, reason: this.seal(h.reason, at.hold(id, h.kind, h.seq, "reason")), details: this.seal(h.details, at.hold(id, h.kind, h.seq, "details")) }));
    if (m.newRuns) out.newRuns = m.newRuns.map((r) => this.run(r));
    if (m.snapshots) {
      out.snapshots = m.snapshots.map((s) => ({
        ...s,
        root: isKeyedRoot(s.root) ? s.root : keyedRoot(this.ring.blobAddress(s.root)),
        notes: this.seal(s.notes, at.snapshot(id, s.seq, s.source, "notes")),
        checkpoint: this.seal(s.checkpoint, at.snapshot(id, s.seq, s.source, "checkpoint")),
      }));
    }
    if (m.idempotency) out.idempotency = this.idempotency(m.idempotency);
    if (m.events) out.events = this.events(id, m.events);
    return out;
  }

  blobs(blobs: readonly BlobWrite[]): BlobWrite[] {
    return blobs.map((b) => {
      const address = this.ring.blobAddress(b.hash);
      return { hash: address, size: b.size, data: sealBytes(this.ring.active, b.data, at.blob(address)) };
    });
  }

  openBlob(hash: string, b: BlobRow): BlobRow {
    try {
      return { hash, size: b.size, data: openBytes(this.ring.keys, b.data, at.blob(b.hash)) };
    } catch (e) {
      throw tampered(`blobs|${b.hash}|data`, e);
    }
  }
}

/**
 * `store` with its payloads encrypted when it is encrypted (or when `chain` gives a key and the
 * store is new), and passed through when it is plain.
 */
/**
 * Encryption's decision for every member of Store (see LayerDecisions): `wraps` seals what it
 * writes and opens (and checks) what it reads; the rest carry no sealed payload, pass sealed rows
 * on as stored on purpose (a dump or backup of an encrypted store holds them sealed), or are
 * read-only views computed from the keyring.
 */
export const ENCRYPTION_DECISIONS = {
  dialect: "no payload",
  location: "no payload",
  migrate: "wraps",
  check: "wraps",
  close: "no payload",
  getRun: "wraps",
  listRuns: "wraps",
  countRuns: "no payload",
  runActivity: "wraps",
  completedStep: "wraps",
  journal: "wraps",
  waits: "wraps",
  dueTimers: "wraps",
  holds: "wraps",
  events: "wraps",
  eventsAfter: "wraps",
  listSessions: "wraps",
  maxUnitsPerCommit: "no payload",
  commitsInFlight: "no payload",
  createRun: "wraps",
  commit: "wraps",
  leaseClock: "no payload",
  claim: "wraps",
  claimable: "wraps",
  renewLeases: "no payload",
  leasesOnHost: "no payload",
  expireLease: "no payload",
  idempotencyKey: "wraps",
  pruneIdempotencyKeys: "no payload",
  argsDigest: "computed",
  announceDefinitions: "no payload",
  refreshAnnouncements: "no payload",
  withdrawAnnouncements: "no payload",
  listDefinitions: "no payload",
  pruneAnnouncements: "no payload",
  putBlobs: "wraps",
  missingBlobs: "wraps",
  getBlobs: "wraps",
  snapshots: "wraps",
  getSnapshot: "wraps",
  snapshotRoots: "no payload",
  pruneSnapshots: "no payload",
  storeTime: "no payload",
  listBlobs: "no payload",
  blobAddress: "computed",
  deleteBlobs: "no payload",
  checkStorage: "no payload",
  createToken: "no payload",
  listTokens: "no payload",
  revokeToken: "no payload",
  findTokenByHash: "no payload",
  touchToken: "no payload",
  dataKeys: "no payload",
  addDataKeys: "no payload",
  rewrapDataKeys: "no payload",
  replaceDataKeys: "no payload",
  tally: "no payload",
  readRows: "sealed as stored",
  writeRows: "sealed as stored",
  finishedRoots: "no payload",
  deleteRunTrees: "wraps",
  attachWorker: "no payload",
  expireGoneOwners: "no payload",
  onWake: "no payload",
  releaseReserve: "no payload",
  restoreReserve: "no payload",
  backupInto: "sealed as stored",
  integrityProblems: "no payload",
  backupRecord: "no payload",
  eraseFreed: "no payload",
  finishErase: "no payload",
} as const satisfies LayerDecisions<Store, "no payload" | "sealed as stored" | "computed">;

/** A run that lists its output references (schema 13): its sealed output need not be opened to know them. */
function listsRefs(outputRefs: string | null | undefined): boolean {
  return outputRefs !== null && outputRefs !== undefined;
}

/** A bug in the caller, not bad input: every resolver in Stead reads the wait it answers. */
function unplacedAnswer(runId: string, wait: string): SteadError {
  return new SteadError("STEAD_INTERNAL", `an answer to wait "${wait}" of run ${runId} names no journal position; an encrypted store binds it to one`, {
    runId,
    wait,
    fix: "name the wait's seq in the resolve (read it with store.waits(runId)); this is a bug in the code that resolved it",
  });
}

export function encryptingStore(store: Store, chain: KeyChain, options: { setUp: boolean }): EncryptingStore {
  let ring: Keyring | null = null;
  let sealer: Sealer | null = null;
  let opened: Promise<void> | undefined;
  const openRing = (): Promise<void> =>
    (opened ??= openKeyring(store, chain, options).then(
      (r) => {
        ring = r;
        sealer = r ? new Sealer(r) : null;
      },
      (e: unknown) => {
        opened = undefined;
        throw e;
      },
    ));

  /** How this store's reads open a value: sealed ones by the keyring; with none, any sealed value is refused. */
  const opener = (): Opener => sealer?.open ?? refuseSealed;
  const eventOpener = (): ((e: EventRow) => EventRow) => {
    const s = sealer;
    return s ? (e) => openEvent(s.open, e, notSealed) : (e) => plainEvent(e, sealedWithoutKey);
  };

  const own: { [K in Wrapped<typeof ENCRYPTION_DECISIONS>]-?: NonNullable<Store[K]> } = {
    async migrate() {
      await store.migrate();
      await openRing();
    },
    async check() {
      const info = await store.check();
      // A store older than data keys holds none (and has no table to read them from): it is plain.
      if (info.schemaVersion >= DATA_KEYS_VERSION) await openRing();
      return info;
    },
    async createRun(run: NewRun, events: EventWrite[], idempotency?: IdempotencyWrite): Promise<RunRow> {
      if (!sealer) return store.createRun(run, events, idempotency);
      const s = sealer;
      return openRun(s.open, await store.createRun(s.run(run), s.events(run.id, events), idempotency ? s.idempotency(idempotency) : undefined));
    },
    async commit(units: Unit[], commitOptions?: Parameters<Store["commit"]>[1]) {
      if (!sealer) return store.commit(units, commitOptions);
      const s = sealer;
      return store.commit(
        units.map((u) => u.map((m) => s.mutation(m))),
        commitOptions,
      );
    },
    async getRun(id: string) {
      const r = await store.getRun(id);
      return r && openRun(opener(), r);
    },
    async listRuns(query?: Parameters<Store["listRuns"]>[0]) {
      const page = await store.listRuns(query);
      const o = opener();
      return { ...page, runs: page.runs.map((r) => openListedRun(o, r)) };
    },
    async runActivity(runIds: readonly string[]) {
      const rows = await store.runActivity(runIds);
      const o = opener();
      return rows.map((a) => ({ ...a, openWaits: a.openWaits.map((w) => openListedWait(o, w)), openHolds: a.openHolds.map((h) => openListedHold(o, h)) }));
    },
    async completedStep(runId: string, stepId: string) {
      const r = await store.completedStep(runId, stepId);
      return r && openStep(opener(), r);
    },
    async journal(runId: string) {
      const rows = await store.journal(runId);
      const o = opener();
      return rows.map((r) => openStep(o, r));
    },
    async waits(runId: string) {
      const rows = await store.waits(runId);
      const o = opener();
      return rows.map((w) => openWait(o, w));
    },
    async dueTimers(now: number, limit: number) {
      const rows = await store.dueTimers(now, limit);
      const o = opener();
      return rows.map((w) => openListedWait(o, w));
    },
    async holds(filter?: Parameters<Store["holds"]>[0]) {
      const rows = await store.holds(filter);
      const o = opener();
      return filter?.markDamaged ? rows.map((h) => openListedHold(o, h)) : rows.map((h) => openHold(o, h));
    },
    async events(filter?: Parameters<Store["events"]>[0]) {
      const rows = await store.events(filter);
      const open = eventOpener();
      return rows.map(open);
    },
    async eventsAfter(position: string | null, filter?: Parameters<Store["eventsAfter"]>[1]) {
      const page = await store.eventsAfter(position, filter);
      const open = eventOpener();
      return { ...page, events: page.events.map(open) };
    },
    async listSessions(filter?: Parameters<Store["listSessions"]>[0]) {
      const rows = await store.listSessions(filter);
      const o = opener();
      return rows.map((x) => openListedSession(o, x));
    },
    async claim(request: Parameters<Store["claim"]>[0]) {
      const rows = await store.claim(request);
      const o = opener();
      return rows.map((c) => claimed(o, c));
    },
    async claimable(request: Parameters<Store["claimable"]>[0]) {
      const rows = await store.claimable(request);
      const o = opener();
      return rows.map((c) => claimed(o, c));
    },
    async idempotencyKey(verb: string, scope: string, key: string) {
      const r = await store.idempotencyKey(verb, scope, key);
      return r && openIdempotency(opener(), r);
    },
    async deleteRunTrees(roots: readonly string[], o: RetentionOptions) {
      const keeps = o.summaryKeeps;
      if (!keeps) return store.deleteRunTrees(roots, o);
      const open = opener();
      return store.deleteRunTrees(roots, { ...o, summaryKeeps: (s, runId) => keeps({ ...s, output: listsRefs(s.outputRefs) ? null : open(s.output, at.run(runId, "output")) }, runId) });
    },
    async snapshots(runId: string) {
      const rows = await store.snapshots(runId);
      const o = opener();
      return rows.map((x) => openSnapshot(o, x));
    },
    async getSnapshot(runId: string, where: Parameters<Store["getSnapshot"]>[1]) {
      const r = await store.getSnapshot(runId, where);
      return r && openSnapshot(opener(), r);
    },
    async putBlobs(blobs: readonly BlobWrite[]) {
      return store.putBlobs(sealer ? sealer.blobs(blobs) : blobs);
    },
    async missingBlobs(hashes: readonly string[]) {
      const r = ring;
      if (!r) return store.missingBlobs(hashes);
      const byAddress = new Map(hashes.map((h) => [addressOf(r, h), h]));
      return (await store.missingBlobs([...byAddress.keys()])).map((a) => byAddress.get(a) ?? a);
    },
    async getBlobs(hashes: readonly string[]) {
      const r = ring;
      const s = sealer;
      if (!r || !s) return (await store.getBlobs(hashes)).map(plainBlob);
      const byAddress = new Map(hashes.map((h) => [addressOf(r, h), h]));
      return (await store.getBlobs([...byAddress.keys()])).map((b) => s.openBlob(byAddress.get(b.hash) ?? b.hash, b));
    },
  };
  /** An encrypted store's idempotency digests are keyed; a plain store's are the store's own (or SHA-256). */
  const argsDigest = (text: string): string => {
    const r = ring;
    return r ? `${KEYED_ARGS}${r.digest("idempotency arguments", text)}` : (store.argsDigest?.(text) ?? plainDigest(text));
  };
  const reloadKeys = (): Promise<void> => {
    opened = undefined;
    return openRing();
  };
  /**
   * The target holds no rows (the importer checked), so no value is sealed by a key replaced
   * here. Its keys are then wrapped by the key given, else by the key that wraps its own keys now
   * (a store set up by `stead keys init`, opened by the key directory), else as the dump had them.
   */
  const adoptKeys = async (keys: readonly DataKeyRow[], dumpName: string): Promise<() => Promise<void>> => {
    await openRing();
    const own = await store.dataKeys();
    if (keys.length === 0) {
      if (own.length === 0) return () => Promise.resolve();
      throw new SteadError("STEAD_STORE_PLAIN", `${dumpName} is of a plain store, and ${store.location} is encrypted: its rows would be written in the clear`, {
        fix: "import it into a store opened without a key (unset STEAD_ENCRYPTION_KEY and STEAD_ENCRYPTION_KEY_FILE, and use a new store path or database)",
      });
    }
    const ownKek = own[0]?.kekId;
    const wrapper = chain.given ?? (ownKek === undefined ? undefined : chain.find(ownKek));
    await store.replaceDataKeys(await adoptedKeys(keys, chain, dumpName, wrapper));
    await reloadKeys();
    return async () => {
      await store.replaceDataKeys(own);
      await reloadKeys();
    };
  };
  const dumpSigner = dumpSignerOf(chain);
  // Read-only members: the keyring, the address of a blob (workspace gc marks by content hash; an
  // encrypted store lists blobs by address), the import's key adoption, and the signer of dumps
  // and backups. Transfer rows (readRows/writeRows) pass through as stored: an encrypted store's
  // dump holds them sealed.
  const computed = new Map<PropertyKey, () => unknown>([
    ["keyring", () => ring],
    ["blobAddress", () => ring?.blobAddress],
    ["argsDigest", () => argsDigest],
    ["reloadKeys", () => reloadKeys],
    ["adoptKeys", () => adoptKeys],
    ["dumpSigner", () => dumpSigner],
  ]);
  return layeredStore(store, new Map(Object.entries(own)), computed) as EncryptingStore;
}

