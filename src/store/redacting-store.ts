/**
 * A store whose writes are redacted before they are applied: every payload a new run or a
 * mutation carries (inputs, outputs, errors, wait requests and answers, hold details, checkpoint
 * metadata, event data) goes through the redactor first, so a secret never reaches the store nor
 * anything that reads it (its event log, the CLI, the API, the console, exports). A unit that had
 * something redacted also records a `payload.redacted` event on its run: which fields, which
 * rules, never a value.
 *
 * Invariant: the caller's objects are never changed: a unit that had something redacted is written
 * as a copy, which its result carries (UnitResult.written) for a caller that must see what was
 * stored (a step's caller returns its output as recorded, so replay sees what live code saw).
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

/**
 * One write's redaction. Each method returns its argument with every payload redacted: the same
 * object when nothing was, a copy otherwise (never changed in place: a caller may hold it).
 */
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

  /** A plain string (not JSON text). */
  plain(value: string, field: string): string {
    const r = this.redactor.plain(value);
    if (r.rules.length === 0) return value;
    this.found.push({ field, rules: r.rules });
    return r.text;
  }

  events(events: EventWrite[] | undefined): EventWrite[] | undefined {
    if (!events) return events;
    let changed = false;
    const out = events.map((e) => {
      if (e.data === undefined) return e;
      const rules = new Set<string>();
      const data = this.redactor.value(e.data, rules);
      if (rules.size === 0) return e;
      this.found.push({ field: `event ${e.type}`, rules: [...rules] });
      changed = true;
      return { ...e, data };
    });
    return changed ? out : events;
  }

  run(r: NewRun, field: string): NewRun {
    const input = this.text(r.input, `${field} input`);
    // A fork's journal, copied from its source (already redacted there, unless written before redaction was configured).
    const journal = this.all(r.journal, (s) => this.step(s));
    return input === r.input && journal === r.journal ? r : { ...r, input, ...(journal ? { journal } : {}) };
  }

  step(s: StepWrite): StepWrite {
    const output = this.text(s.output, `step ${s.stepId} output`);
    const error = this.text(s.error, `step ${s.stepId} error`);
    const checkpoint = this.text(s.checkpoint, `step ${s.stepId} checkpoint`);
    return output === s.output && error === s.error && checkpoint === s.checkpoint ? s : { ...s, output, error, checkpoint };
  }

  mutation(m: Mutation): Mutation {
    const before = this.found.length;
    const out: Mutation = { ...m };
    if (m.run) {
      const output = this.text(m.run.output, "run output");
      const error = this.text(m.run.error, "run error");
      if (output !== m.run.output || error !== m.run.error) out.run = { ...m.run, output, error };
    }
    out.steps = this.all(m.steps, (s) => this.step(s));
    out.waits = this.all(m.waits, (w) => {
      const request = this.text(w.request, `wait ${w.name} request`);
      return request === w.request ? w : { ...w, request };
    });
    out.resolveWaits = this.all(m.resolveWaits, (w) => {
      const result = this.text(w.result, `wait ${w.name} result`);
      return result === w.result ? w : { ...w, result };
    });
    out.holds = this.all(m.holds, (h) => {
      const details = this.text(h.details, `hold ${h.kind} details`) ?? h.details;
      const reason = this.plain(h.reason, `hold ${h.kind} reason`);
      return details === h.details && reason === h.reason ? h : { ...h, details, reason };
    });
    out.newRuns = this.all(m.newRuns, (r) => this.run(r, `new run ${r.id}`));
    out.snapshots = this.all(m.snapshots, (x) => {
      const checkpoint = this.text(x.checkpoint, `snapshot ${x.seq} checkpoint`);
      return checkpoint === x.checkpoint ? x : { ...x, checkpoint };
    });
    if (m.idempotency) out.idempotency = this.idempotency(m.idempotency);
    out.events = this.events(m.events);
    if (this.found.length === before) return m;
    for (const k of ["steps", "waits", "resolveWaits", "holds", "newRuns", "snapshots", "events"] as const) if (out[k] === undefined) delete out[k];
    return out;
  }

  idempotency(k: IdempotencyWrite): IdempotencyWrite {
    const result = this.text(k.result, `${k.verb} result`) ?? k.result;
    const summary = this.plain(k.summary, `${k.verb} arguments`);
    return result === k.result && summary === k.summary ? k : { ...k, result, summary };
  }

  /** The record of what was redacted, as an event (undefined when nothing was). */
  record(): EventWrite | undefined {
    return this.found.length ? { type: REDACTED_EVENT, data: { fields: this.found.map((f) => ({ field: f.field, rules: f.rules })) } } : undefined;
  }

  /** `list` with each item through `f`: the same array when no item changed. */
  private all<T>(list: T[] | undefined, f: (x: T) => T): T[] | undefined {
    if (!list) return list;
    let changed = false;
    const out = list.map((x) => {
      const y = f(x);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : list;
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
    const written = s.run(run, "run");
    const writtenEvents = s.events(events) ?? events;
    const key = idempotency && s.idempotency(idempotency);
    const record = s.record();
    return rawCreateRun(written, record ? [...writtenEvents, record] : writtenEvents, key);
  };
  const commit = async (units: Unit[], options?: CommitOptions): Promise<UnitResult[]> => {
    const changed: boolean[] = [];
    const written = units.map((unit) => {
      const s = new Scrub(redactor);
      const out = unit.map((m) => s.mutation(m));
      const record = s.record();
      const first = out[0];
      if (record && first) out[0] = { ...first, events: [...(first.events ?? []), record] };
      changed.push(record !== undefined);
      return out;
    });
    const results = await rawCommit(written, options);
    return results.map((r, i) => (r.ok && changed[i] ? { ...r, written: written[i] } : r));
  };
  // Arguments are digested as they are stored, secrets redacted: a digest of a secret would confirm a guess of it.
  const argsDigest = (text: string): string => argsDigestOf(store, redactor.json(text).text);
  const own: { [K in Wrapped<typeof REDACTION_DECISIONS>]-?: NonNullable<Store[K]> } = { createRun, commit, argsDigest };
  return layeredStore(store, new Map<PropertyKey, unknown>(Object.entries(own)));
}
