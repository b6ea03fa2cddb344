/**
 * What the API answers, as the client sees it. Declared here, not imported from the server: the
 * client loads nothing of Stead but itself. Objects are open (`[field: string]: unknown`): a
 * field a later server adds still reaches the caller.
 */
export type RunStatus = "pending" | "running" | "waiting" | "held" | "paused" | "completed" | "failed" | "cancelled";

export interface Run {
  id: string;
  definition: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: unknown;
  createdAt: number;
  updatedAt: number;
  /**
   * In a listing only: a sealed value of the run failed to open (its row was changed, or the key
   * is not the one it was sealed with); the message names the row. When that is the run's own
   * row, `input`, `output` and `error` are null, unread; `runs.list` marks a run for a damaged open
   * wait or hold of it too. Reading the run itself (`runs.get`) is refused with this code.
   */
  damaged?: RunDamage;
  [field: string]: unknown;
}

/** Why a listed run, wait, hold or session could not be read: its code, and a message naming the row. */
export interface RunDamage {
  code: "STEAD_DATA_TAMPERED";
  message: string;
}

export interface RunDetail {
  run: Run;
  journal: Record<string, unknown>[];
  waits: Record<string, unknown>[];
  holds: Record<string, unknown>[];
  why: Record<string, unknown>;
  [field: string]: unknown;
}

/** A run's detail without its journal (`runs.get(id, { journal: false })`): its length instead. */
export interface RunDetailWithoutJournal extends Omit<RunDetail, "journal"> {
  journalLength: number;
}

/** One page of runs; `nextCursor` (null on the last page) asks for the next with the same filter. */
export interface RunList {
  runs: Run[];
  nextCursor: string | null;
}

/** The run listing's filter, sort and page: the fields of `GET /runs`, times in ms since the epoch. */
export interface RunFilter {
  status?: RunStatus[];
  definition?: string;
  sessionId?: string;
  parentId?: string;
  createdSince?: number;
  createdBefore?: number;
  updatedSince?: number;
  updatedBefore?: number;
  idPrefix?: string;
  sort?: "createdAt" | "updatedAt";
  order?: "asc" | "desc";
  limit?: number;
  cursor?: string;
}

export interface Event {
  seq: number;
  runId: string;
  type: string;
  at: number;
  data: Record<string, unknown>;
}

/** An event from a live stream, with the position after it: pass it as `after` to resume. */
export interface StreamedEvent extends Event {
  position: string;
}

/** A control command's result: `already` is true when the same command (or key) was recorded before. */
export interface Replayed {
  already: boolean;
  [field: string]: unknown;
}

export interface Session {
  id: string;
  /** Its last turn's sealed error failed to open (`last.error` is then null); reading the session (`sessions.get`) is refused with this code. */
  damaged?: RunDamage;
  [field: string]: unknown;
}

/** A hold: a run stopped until a person releases it (`GET /holds`). */
export interface Hold {
  id: number;
  runId: string;
  kind: string;
  stepId: string | null;
  reason: string;
  details: Record<string, unknown>;
  status: string;
  choice: string | null;
  createdAt: number;
  releasedAt: number | null;
  releasedBy: string | null;
  /** In a listing across runs only: its sealed values failed to open; `reason` is "" and `details` {}, unread. Releasing it is refused with this code. */
  damaged?: RunDamage;
  [field: string]: unknown;
}

/**
 * Who the caller is (`GET /auth/me`): a token's name and role, and every action that role may
 * take. An anonymous reader (no token, on a loopback server that serves reads) has null name and
 * role and the read actions only. The server refuses an action not listed whatever the console shows.
 */
export interface Me {
  name: string | null;
  role: "viewer" | "operator" | "admin" | null;
  actions: string[];
}

/** A page of a run's journal in journal order: `steps` from `offset`, of `total` entries. */
export interface JournalPage {
  steps: Record<string, unknown>[];
  total: number;
  offset: number;
}

export type WaitKind = "approval" | "signal" | "timer" | "quota" | "child";

/** An open wait and the run that waits. */
export interface OpenWait {
  runId: string;
  definition: string;
  sessionId: string | null;
  runStatus: RunStatus;
  name: string;
  kind: WaitKind;
  request: unknown;
  /** An approval's: "tool-call" (an agent's tool call: approve with edited `input` or `scope`) or "code"; null for other kinds. */
  requestKind: "tool-call" | "code" | null;
  createdAt: number;
  /** Its sealed values failed to open: `request` is absent, unread, and a decision on it is refused with this code. */
  damaged?: RunDamage;
  [field: string]: unknown;
}

/** Open waits, newest first; `truncated`: more runs could wait than the server looked at, so older waits may be missing. */
export interface OpenWaits {
  waits: OpenWait[];
  truncated: boolean;
}

/** Runs by status, open waits and holds by kind; a status or kind with none is absent. */
export interface Tally {
  runs: Partial<Record<RunStatus, number>>;
  openWaits: Partial<Record<WaitKind, number>>;
  openHolds: Record<string, number>;
}
