/**
 * A store whose writes are redacted before they are applied: every payload a new run or a
 * mutation carries (inputs, outputs, errors, wait requests and answers, hold details, checkpoint
 * metadata, event data) goes through the redactor first, so a secret never reaches the store nor
 * anything that reads it (its event log, the CLI, the API, the console, exports). A unit that had
 * something redacted also records a `payload.redacted` event on its run: which fields, which
 * rules, never a value.
 *
 * Invariant: fields are rewritten in place, in the objects the caller passed. The engine relies on
 * it: a step's caller gets the written step's output as stored, so replay sees what live code saw.
 */
import type { Redactor } from "../redaction/redactor.js";
import type { CommitOptions, EventWrite, IdempotencyWrite, Mutation, NewRun, RunRow, StepWrite, Store, Unit, UnitResult } from "./types.js";

import { argsDigestOf } from "./args-digest.js";
import { layeredStore, type LayerDecisions, type Wrapped } from "./layered-store.js";

export const REDACTED_EVENT = "payload.redacted";

interface Found {
  field: string;
  rules: string[];
}

class Scrub {
  readonly found: Found[] = [];
  constructor(private readonly redactor: Redactor) {}

  /** JSON text, as stored. */
  text<T extends string | null | undefined>(value: T, field: string): T {
    if (typeof value !== "string") return value;
    const r = this.redactor.json(value);
    if (r.rules.length === 0) return value;
    this.found.push({ field, rules: r.rules });
    return r.text as T;
  }

  events(events: EventWrite[] | undefined): void {
    for (const e of events ?? []) {
      if (e.data === undefined) continue;
      const rules = new Set<string>();
      const data = this.redactor.value(e.data, rules);
      if (rules.size === 0) continue;
      e.data = data;
      this.found.push({ field: `event ${e.type}`, rules: [...rules] });
    }
  }

  run(r: NewRun, field: string): void {
    r.input = this.text(r.input, `${field} input`);
    // A fork's journal, copied from its source (already redacted there, unless written before redaction was configured).
    for (const s of r.journal ?? []) this.step(s);
  }

  step(s: StepWrite): void {
    s.output = this.text(s.output, `step ${s.stepId} output`);
    s.error = this.text(s.error, `step ${s.stepId} error`);
    s.checkpoint = this.text(s.checkpoint, `step ${s.stepId} checkpoint`);
  }

  mutation(m: Mutation): void {
    if (m.run) {
      m.run.output = this.text(m.run.output, "run output");
      m.run.error = this.text(m.run.error, "run error");
    }
    for (const s of m.steps ?? []) this.step(s);
    for (const w of m.waits ?? []) w.request = this.text(w.request, `wait ${w.name} request`);
    for (const w of m.resolveWaits ?? []) w.result = this.text(w.result, `wait ${w.name} result`);
    for (const h of m.holds ?? []) {
      h.details = this.text(h.details, `hold ${h.kind} details`) ?? h.details;
      h.reason = this.plain(h.reason, `hold ${h.kind} reason`);
    }
    for (const r of m.newRuns ?? []) this.run(r, `new run ${r.id}`);
    for (const s of m.snapshots ?? []) s.checkpoint = this.text(s.checkpoint, `snapshot ${s.seq} checkpoint`);
    if (m.idempotency) this.idempotency(m.idempotency);
    this.events(m.events);
  }

  idempotency(k: IdempotencyWrite): void {
    k.result = this.text(k.result, `${k.verb} result`) ?? k.result;
    k.summary = this.plain(k.summary, `${k.verb} arguments`);
  }

  /** A plain string (not JSON text). */
  plain(value: string, field: string): string {
    const r = this.redactor.plain(value);
    if (r.rules.length === 0) return value;
    this.found.push({ field, rules: r.rules });
    return r.text;
  }

  /** The record of what was redacted, as an event (undefined when nothing was). */
  record(): EventWrite | undefined {
    return this.found.length ? { type: REDACTED_EVENT, data: { fields: this.found.map((f) => ({ field: f.field, rules: f.rules })) } } : undefined;
  }
}

/** `store` with its two write paths (createRun, commit) redacted; everything else is the store's own. */
/**
 * Redaction's decision for every member of Store (see LayerDecisions): it wraps the two writes
 * that carry payloads a model, a tool or a user wrote (createRun, commit) and the digest of a
 * command's arguments. Reads need nothing (what is stored was redacted as it was written); rows
 * and bytes a transfer, a backup or a workspace copies go as they are (a dump's rows were
 * redacted when first written; workspace files are restored byte for byte); the rest write no
 * payload.
 */
export const REDACTION_DECISIONS = {
  dialect: "no payload",
  location: "no payload",
  migrate: "no payload",
  check: "no payload",
  close: "no payload",
  getRun: "read",
  listRuns: "read",
  countRuns: "read",
  runActivity: "read",
  completedStep: "read",
  journal: "read",
  waits: "read",
  dueTimers: "read",
  holds: "read",
  events: "read",
  eventsAfter: "read",
  listSessions: "read",
  maxUnitsPerCommit: "no payload",
  commitsInFlight: "no payload",
  createRun: "wraps",
  commit: "wraps",
  leaseClock: "no payload",
  claim: "read",
  claimable: "read",
  renewLeases: "no payload",
  leasesOnHost: "read",
  expireLease: "no payload",
  idempotencyKey: "read",
  pruneIdempotencyKeys: "no payload",
  argsDigest: "wraps",
  announceDefinitions: "no payload",
  refreshAnnouncements: "no payload",
  withdrawAnnouncements: "no payload",
  listDefinitions: "read",
  pruneAnnouncements: "no payload",
  putBlobs: "copied as is",
  missingBlobs: "read",
  getBlobs: "read",
  snapshots: "read",
  getSnapshot: "read",
  snapshotRoots: "read",
  pruneSnapshots: "no payload",
  storeTime: "no payload",
  listBlobs: "read",
  blobAddress: "no payload",
  deleteBlobs: "no payload",
  checkStorage: "no payload",
  createToken: "no payload",
  listTokens: "read",
  revokeToken: "no payload",
  findTokenByHash: "read",
  touchToken: "no payload",
  dataKeys: "read",
  addDataKeys: "no payload",
  rewrapDataKeys: "no payload",
  replaceDataKeys: "no payload",
  tally: "read",
  readRows: "read",
  writeRows: "copied as is",
  finishedRoots: "read",
  deleteRunTrees: "no payload",
  attachWorker: "no payload",
  expireGoneOwners: "no payload",
  onWake: "no payload",
  releaseReserve: "no payload",
  restoreReserve: "no payload",
  backupInto: "copied as is",
  integrityProblems: "read",
  backupRecord: "read",
  eraseFreed: "no payload",
  finishErase: "no payload",
} as const satisfies LayerDecisions<Store, "no payload" | "read" | "copied as is">;

export function redactingStore(store: Store, redactor: Redactor): Store {
  // Wrapped even when nothing is redacted yet: `ctx.secret` adds values later.
  const rawCreateRun = store.createRun.bind(store);
  const rawCommit = store.commit.bind(store);
  const createRun = (run: NewRun, events: EventWrite[], idempotency?: IdempotencyWrite): Promise<RunRow> => {
    const s = new Scrub(redactor);
    s.run(run, "run");
    s.events(events);
    if (idempotency) s.idempotency(idempotency);
    const record = s.record();
    return rawCreateRun(run, record ? [...events, record] : events, idempotency);
  };
  const commit = (units: Unit[], options?: CommitOptions): Promise<UnitResult[]> => {
    for (const unit of units) {
      const s = new Scrub(redactor);
      for (const m of unit) s.mutation(m);
      const record = s.record();
      const first = unit[0];
      if (record && first) first.events = [...(first.events ?? []), record];
    }
    return rawCommit(units, options);
  };
  // Arguments are digested as they are stored, secrets redacted: a digest of a secret would confirm a guess of it.
  const argsDigest = (text: string): string => argsDigestOf(store, redactor.json(text).text);
  const own: { [K in Wrapped<typeof REDACTION_DECISIONS>]-?: NonNullable<Store[K]> } = { createRun, commit, argsDigest };
  return layeredStore(store, new Map<PropertyKey, unknown>(Object.entries(own)));
}
