import { redactTokens } from "./redaction/redact.js";
import { describeThrown } from "./thrown.js";

/** How the `stead` command ends on an error with this code (see cli/exit-codes.ts for the numbers). */
export type CliExitKind = "refused" | "store" | "internal";

export interface ErrorCodeInfo {
  /** When Stead raises it. */
  readonly when: string;
  /** What a caller can do about it (each error's own `fix` says it for the case at hand). */
  readonly action: string;
  readonly exit: CliExitKind;
  /**
   * The HTTP status the server will answer with; null for codes that only appear in a run's
   * recorded `error` (a failed step, a cancelled run), never as a refusal of a request.
   */
  readonly http: number | null;
}

/**
 * The one list of error codes. The `SteadErrorCode` type, the CLI's exit codes and docs/errors.md
 * (checked by test/errors.test.ts) all derive from it. Codes are API, published by the CLI and
 * the server: never rename or reuse one; retire it in CHANGELOG.md. Every code listed is raised
 * somewhere (test/errors.test.ts checks each is named in src/ outside this file).
 */
export const ERROR_CODES = {
  // A request's arguments.
  STEAD_BAD_JSON: {
    when: "a JSON argument (an input, a signal payload, edited tool arguments, a release result) is not valid JSON, or is empty",
    action: "correct the JSON; the message names the argument and the parser's complaint. Nothing was written.",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_OPTION: {
    when: "an option or argument has a value the command does not take (a duration, a count, a run status, an idempotency key, a release choice, an approval scope, a run listing's filter, sort, page size or cursor), is missing where the case needs it, or conflicts with another option",
    action: "change the option as the error's fix says. Nothing was written.",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_ID: {
    when: "a run or session id given by the caller is malformed, or a run id chosen for a new run holds '.', which only a child run's id (<parent id>.<step id>) does",
    action: "use 1-200 characters: letters, digits, '_', '.', ':' or '-', not starting with '-'; no '.' in the id of a new run you start or fork",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_PATH: {
    when: "a file or directory named by the caller is missing, cannot be read or written, or is not what is needed (a workspace that is not a directory, a restore target that is not empty)",
    action: "pass another path; the message names the path and what is wrong with it",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_POSITION: {
    when: "an event stream position (an SSE Last-Event-ID, the `position` of an `eventsAfter` read) is not one this store's stream gives: malformed, of the other kind of store, or later than anything the store has written",
    action: "resume from a position the store's stream returned, passed back unchanged, or read from the start without one. Nothing was read.",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_DUMP: {
    when: "a dump given to import is not one `stead export` wrote, or it was cut short or edited",
    action: "export the source store again and import that file unedited; the target store was not touched",
    exit: "refused",
    http: 400,
  },
  STEAD_BAD_BACKUP: {
    when: "a backup given to restore fails its checks: it is empty or not a Stead store, SQLite's integrity check fails, a table or column is missing, a value has the wrong type, its record of itself is malformed, or its rows do not match the row counts and digests (and an encrypted store's signature) recorded in it when it was taken (it was damaged or edited since); or it is a store `stead backup` did not write",
    action: "restore from another backup; the target store was not touched",
    exit: "refused",
    http: 400,
  },
  STEAD_SCHEMA_MISMATCH: {
    when: "a value is valid JSON but not the shape its receiver takes: a run's input that fails its definition's input schema (a workflow's declared `input`, the schema workers announced for a start by name, an agent's prompt), edited tool arguments that fail the tool's input schema",
    action: "send a value of the shape the message describes; each issue names its place as a JSON Pointer (the call or run is unchanged, nothing was written)",
    exit: "refused",
    http: 422,
  },
  STEAD_PAYLOAD_TOO_LARGE: {
    when: "a value to be stored (an input, an output, a step result, checkpoint metadata) is over the payload ceiling (1 MiB by default)",
    action: "store less (a reference to the data instead of the data), or raise `payloadLimitBytes`. Nothing was truncated.",
    exit: "refused",
    http: 413,
  },
  STEAD_PAYLOAD_TOO_DEEP: {
    when: "a value to be stored is nested more than 512 levels deep",
    action: "flatten the value. Nothing was stored.",
    exit: "refused",
    http: 413,
  },
  STEAD_NOT_SERIALIZABLE: {
    when: "a value to be stored is not plain JSON data (a function, a cycle, a BigInt, a value whose reading throws)",
    action: "return plain JSON data from the step or run",
    exit: "refused",
    http: 422,
  },
  STEAD_IDEMPOTENCY_CONFLICT: {
    when: "an idempotency key is used again with other arguments than its first use",
    action: "use a new key for a different command; repeat the first command's arguments to get its result",
    exit: "refused",
    http: 409,
  },
  STEAD_ID_TAKEN: {
    when: "an id or name chosen by the caller is taken: a run with that id exists, a session with that id belongs to another agent, or a token that is not revoked has that name; or a run's child cannot start because a run that is not that child holds its id (made before such ids were refused)",
    action: "choose another id or name (or omit a run id to get a fresh one; revoke the token first to reuse its name)",
    exit: "refused",
    http: 409,
  },

  // Who is asking.
  STEAD_TOKEN_REFUSED: {
    when: "a request carries no token, or one that is malformed, unknown or revoked",
    action: "present a valid token of your own (an admin creates one with `stead tokens create`); nothing was done",
    exit: "refused",
    http: 401,
  },
  STEAD_NOT_PERMITTED: {
    when: "the caller's token has a role that does not permit the action (a viewer approving, an operator managing tokens)",
    action: "use a token whose role permits it; the message names the role the action takes. Nothing was done.",
    exit: "refused",
    http: 403,
  },

  // Things the request names that do not exist.
  STEAD_RUN_NOT_FOUND: { when: "no run has the given id", action: "check the id (`stead ps` lists runs)", exit: "refused", http: 404 },
  STEAD_SESSION_NOT_FOUND: { when: "no session has the given id", action: "check the id (`stead sessions` lists sessions)", exit: "refused", http: 404 },
  STEAD_WAIT_NOT_FOUND: {
    when: "the run is not waiting for the named approval or signal",
    action: "see what it waits for in the message or with `stead why <run>`",
    exit: "refused",
    http: 404,
  },
  STEAD_HOLD_NOT_FOUND: { when: "the run has no open hold matching the one named (or not exactly one, when none is named)", action: "name one of the open holds the message lists", exit: "refused", http: 404 },
  STEAD_STEP_NOT_FOUND: { when: "the run's journal has no step with the given id", action: "name a step of the run (`stead status <run>` lists them)", exit: "refused", http: 404 },
  STEAD_TOKEN_NOT_FOUND: { when: "no token has the given name (revoking one)", action: "check the name (`stead tokens list` lists tokens)", exit: "refused", http: 404 },
  STEAD_SNAPSHOT_NOT_FOUND: { when: "the run has no workspace snapshot at the step or position named", action: "name one of its snapshots (`stead snapshots <run>`)", exit: "refused", http: 404 },
  STEAD_FILE_NOT_FOUND: { when: "a workspace snapshot has no file at the path named (none, or a directory or a link there)", action: "name one of the snapshot's files (its tree lists them)", exit: "refused", http: 404 },
  STEAD_DEFINITION_NOT_FOUND: {
    when: "no loaded definition has the name a run or command needs (a file exports no workflow, or not the one named, or a run's module no longer exports its definition), or a start by name names a definition no worker has ever announced in the store",
    action: "load the module that exports it, or name one the message lists; for a start by name, start a worker that serves it (`stead worker <file>`) first",
    exit: "refused",
    http: 404,
  },

  // The state of a run, or of the store's data.
  STEAD_INVALID_STATE: {
    when: "the run (or store) is not in a state the command applies to: resuming a completed run, a decision that conflicts with the one recorded, a run that changed while the command ran, an import into a store that holds runs",
    action: "look at it again (`stead why <run>`) and choose the command its state allows; a command refused for a race can be retried",
    exit: "refused",
    http: 409,
  },
  STEAD_DEFINITION_CHANGED: {
    when: "the command needs the run to continue, but it is held `definition_changed`: its code changed since it started",
    action: "revert the code and release the hold with `retry`, accept the change (`stead resume <run> --accept-change`), or fork the run under the new code",
    exit: "refused",
    http: 409,
  },
  STEAD_NONDETERMINISM: {
    when: "the command needs the run to continue, but it is held `nondeterminism`: replay asked for a step the journal does not have at that position",
    action: "fix the divergence in the code and release the hold with `retry`, or fork the run",
    exit: "refused",
    http: 409,
  },
  STEAD_SNAPSHOT_DAMAGED: {
    when: "a workspace snapshot's stored data is incomplete or damaged (a blob or tree object missing or malformed)",
    action: "restore another snapshot of the run; nothing was written to the target",
    exit: "refused",
    http: 500,
  },

  // Definitions: user code given to Stead.
  STEAD_INVALID_DEFINITION: {
    when: "a definition (workflow, agent, tool, model) is malformed, two share a name, its file cannot be loaded, or its code misuses `ctx` (a step without a function or with an invalid id)",
    action: "fix the code as the message says; a run that failed this way can be retried once it is fixed",
    exit: "refused",
    http: 422,
  },
  STEAD_DUPLICATE_STEP_ID: { when: "a run's code used one step id twice", action: "give each step of a run a unique id", exit: "refused", http: null },

  // Outcomes recorded in a run's error.
  STEAD_STEP_FAILED: { when: "a step threw; the original error's name and code are kept as `originalName` / `originalCode`", action: "fix the cause, then `stead retry <run>`", exit: "refused", http: null },
  STEAD_OUTCOME_UNKNOWN: { when: "an effect's outcome is unknown and a person chose `skip` for it", action: "the step's code decides; check the outside world", exit: "refused", http: null },
  STEAD_ERROR_OUTCOME: { when: "a step's error recorded as its outcome: an agent's tool error, which the model is told as the call's result", action: "nothing: the agent's loop hands it to the model; a journal shows the step completed with this error", exit: "refused", http: null },
  STEAD_CHILD_FAILED: { when: "a child run failed or was cancelled, and its parent awaited it", action: "see the child's error; retry or resume the child", exit: "refused", http: null },
  STEAD_CANCELLED: { when: "the run was cancelled", action: "`stead resume <run>` brings it back from its last completed step", exit: "refused", http: null },
  STEAD_AGENT_LIMIT: { when: "an agent reached one of its limits (`maxSteps` and the like)", action: "raise the limit in the agent's definition and start the task again, or fork the run under the new definition", exit: "refused", http: null },
  STEAD_PROVIDER_UNAVAILABLE: { when: "no model of an agent answered (outage, rate limit, timeouts), after retries and failover", action: "retry the run once a provider answers (`stead retry <run>`)", exit: "refused", http: null },
  STEAD_PROVIDER_REJECTED: { when: "a model provider refused the request (bad credentials, invalid request)", action: "fix the provider's configuration, then retry the run", exit: "refused", http: null },
  STEAD_TURN_INTERRUPTED: { when: "a session's turn was cut off by a crash and its agent's policy is `interrupt`", action: "send the input again as a new turn if it still matters", exit: "refused", http: null },
  STEAD_RESTORE_FAILED: { when: "a worker's restore hook failed for a run it was about to claim; the run was not claimed", action: "fix the hook (or what it restores); the run stays resumable", exit: "refused", http: null },
  STEAD_SECRET_MISSING: { when: "a run asked `ctx.secret` for a name that neither the worker's environment nor the instance's `secretSource` has", action: "set it where the worker runs, then `stead retry <run>`", exit: "refused", http: null },
  STEAD_TIMEOUT: { when: "a run did not reach the state waited for within the time given", action: "wait longer, or see why with `stead why <run>`", exit: "refused", http: 504 },

  // The store.
  STEAD_NOT_A_STORE: { when: "the file or database named as the store holds something other than a Stead store", action: "point `--store` / STEAD_DATABASE_URL at a Stead store or an empty one", exit: "refused", http: 503 },
  STEAD_STORE_MISSING: { when: "no store exists where the command needs one (it only creates stores where it may)", action: "check the path or URL; `stead run` or `stead worker` creates a store", exit: "refused", http: 503 },
  STEAD_STORE_INCOMPLETE: { when: "a store given to createStead as an object lacks a member of the core (what a worker needs to claim, commit and read runs) or part of a capability port", action: "implement the members the message names (stead/conformance tests each port), or use a built-in store", exit: "refused", http: 503 },
  STEAD_STORE_CAPABILITY_MISSING: { when: "the store (one of your own) does not implement the port the command needs (tokens, workspaces, export, metrics…); the message names it", action: "use a built-in store (SQLite or Postgres) for it, or implement that port", exit: "refused", http: 501 },
  STEAD_STORE_TOO_NEW: { when: "the store's schema is newer than this Stead", action: "upgrade Stead to the version that wrote the store", exit: "refused", http: 503 },
  STEAD_STORE_TOO_OLD: { when: "the store's schema is older than this Stead and needs a migration", action: "run `stead migrate` on it as a user who may change its schema", exit: "refused", http: 503 },
  STEAD_STORE_NOT_READABLE: { when: "the store exists but cannot be read (permissions, a damaged file)", action: "fix its permissions, or restore it from a backup", exit: "refused", http: 503 },
  STEAD_STORE_NOT_WRITABLE: { when: "the store can be read but not written (permissions, a read-only file system)", action: "fix its permissions; read-only commands still work", exit: "refused", http: 503 },
  STEAD_STORE_AUTH_FAILED: { when: "Postgres refused the credentials", action: "check the user and password in STEAD_DATABASE_URL (or `--store`)", exit: "refused", http: 503 },
  STEAD_STORE_UNREACHABLE: { when: "the store cannot be reached (Postgres down, network)", action: "retry once it is reachable; nothing was written", exit: "store", http: 503 },
  STEAD_STORE_LOST: { when: "the SQLite store file was deleted or replaced while in use: from then on the process refuses every read and write of it (a worker stops its runs without writing; `stead worker` and `stead serve` exit)", action: "restore the store (or point `--store` at the new one), then start the process again", exit: "store", http: 503 },
  STEAD_KEY_MISSING: { when: "the store is encrypted and none of the keys its data keys were wrapped with is configured here (no key file at the default place, no STEAD_ENCRYPTION_KEY or STEAD_ENCRYPTION_KEY_FILE, no key provider given)", action: "give the key the store was encrypted with (the message names its id); a store never opens in plain text", exit: "refused", http: 503 },
  STEAD_KEY_WRONG: { when: "the key given does not unwrap the store's data keys: another store's key, an edited key file, or a provider that answers with a different key", action: "give the key named in the message (its id is the key file's name)", exit: "refused", http: 503 },
  STEAD_KEY_EXPOSED: {
    when: "a key file (given, or found in the key directory) may be read by its group or by other users of the machine, or its directory may be written by them (not sticky): they could remove the key or put another file in its place",
    action: "make it its owner's alone (`chmod 600 <file>`, `chmod 700 <directory>`), or set STEAD_ALLOW_READABLE_KEY_FILE=1 to use it as it is. Nothing was opened.",
    exit: "refused",
    http: 503,
  },
  STEAD_STORE_PLAIN: { when: "a key was given for a store that already holds runs in plain text (a store is encrypted only from its creation)", action: "open it without a key, or move its runs into a new encrypted store", exit: "refused", http: 503 },
  STEAD_DATA_TAMPERED: {
    when: "a value in an encrypted store failed its authentication: its bytes were changed, it was moved from another row or column, or plain text was written into an encrypted column; or the store's key rows (data_keys) were deleted while its values are sealed, or a sealed value was read where the store has no key for it",
    action: "restore the store (or the rows the message names) from a backup; the message names the table, row and column, or the missing data key. Nothing was returned from it, and nothing was written.",
    exit: "store",
    http: 500,
  },
  STEAD_STORAGE_FULL: { when: "the store cannot write for lack of space", action: "free space where the store lives (or raise its size limit); held runs continue by themselves", exit: "store", http: 507 },
  STEAD_INVALID_MUTATION: {
    when: "a write sent to the store breaks its protocol (a bug in Stead, or in code that calls the store directly)",
    action: "report it: it is a bug, not a fault of the data",
    exit: "internal",
    http: 500,
  },
  // The server's own refusals (stead serve).
  STEAD_ORIGIN_REFUSED: {
    when: "a request reached the server under a Host name it does not serve (DNS rebinding) or from another site's page (a cross-origin Origin)",
    action: "call the server by the address it listens on (or start it with --host for that name), from its own origin; nothing was done",
    exit: "refused",
    http: 403,
  },
  STEAD_NO_ROUTE: {
    when: "a request names a path the server's API does not have",
    action: "see the API's routes in its OpenAPI document (GET /api/v1/openapi.json)",
    exit: "refused",
    http: 404,
  },
  STEAD_TOO_MANY_BAD_TOKENS: {
    when: "a request with a token came from a client (an IPv4 address, or an IPv6 /64) with a bad token on record in the last 15 minutes and as many requests with a token in flight as the server takes; its token was not read",
    action: "wait the Retry-After seconds and retry with a live token; behind a proxy, start the server with `--trust-proxy` so each client is its own address",
    exit: "refused",
    http: 429,
  },
  STEAD_METHOD_NOT_ALLOWED: {
    when: "a request uses a method its path does not take (the path is served with others, which the answer's `Allow` header lists)",
    action: "send the request with a method the `Allow` header lists; the API's routes are in its OpenAPI document (GET /api/v1/openapi.json). Nothing was written.",
    exit: "refused",
    http: 405,
  },
  STEAD_TOO_MANY_STREAMS: {
    when: "the server has as many live event streams open as it serves (`stead serve --max-streams`)",
    action: "retry later, close streams you no longer read, or raise --max-streams",
    exit: "refused",
    http: 503,
  },
  STEAD_INTERNAL: {
    when: "the server failed to answer a request for a reason that is not the request's (the server's log has the error)",
    action: "retry; if it persists, report it with the server's log line",
    exit: "internal",
    http: 500,
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** Every user-facing failure is a SteadError with a stable `code`, the ids involved, and a `fix`. */
export type SteadErrorCode = keyof typeof ERROR_CODES;

export interface SteadErrorDetails {
  runId?: string;
  stepId?: string;
  fix?: string;
  cause?: unknown;
  [key: string]: unknown;
}

/**
 * Every SteadError's message, fix and text details pass through here: a message may echo what a
 * caller passed (an id, a name, a header), and an access token echoed back would be a secret in
 * a terminal, a log line or an HTTP response. The cause is kept as it is, never rendered.
 */
const redacted = (v: unknown): unknown => (typeof v === "string" ? redactTokens(v) : v);

export class SteadError extends Error {
  readonly code: SteadErrorCode;
  readonly runId: string | undefined;
  readonly stepId: string | undefined;
  readonly fix: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: SteadErrorCode, message: string, details: SteadErrorDetails = {}) {
    super(redactTokens(message), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "SteadError";
    this.code = code;
    const { cause: _cause, ...rest } = details;
    this.details = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, redacted(v)]));
    this.runId = this.details.runId as string | undefined;
    this.stepId = this.details.stepId as string | undefined;
    this.fix = this.details.fix as string | undefined;
  }

  /** One line for a terminal: the problem, then the fix. */
  toLine(): string {
    return this.fix ? `${this.message} — ${this.fix}` : this.message;
  }
}

/**
 * The error a step's thrown value becomes in the journal, and the one replay throws again. Its
 * `code` is the original's when that was a Stead code (e.g. STEAD_OUTCOME_UNKNOWN for a skipped
 * effect), else STEAD_STEP_FAILED; `originalName` / `originalCode` keep what the step threw.
 */
export class StepFailedError extends SteadError {
  constructor(runId: string, stepId: string, message: string, readonly originalName: string, readonly originalCode?: string, fix?: string) {
    super(isSteadCode(originalCode) ? originalCode : "STEAD_STEP_FAILED", message, { runId, stepId, ...(fix ? { fix } : {}) });
    this.name = "StepFailedError";
  }
}

const CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_CODES));

export function isSteadCode(code: unknown): code is SteadErrorCode {
  return typeof code === "string" && CODES.has(code);
}

export function isSteadError(e: unknown): e is SteadError {
  try {
    return e instanceof SteadError;
  } catch {
    // A Proxy whose getPrototypeOf trap throws.
    return false;
  }
}

/** A thrown value's message (an Error's `message`, else a description of the value). Never throws. */
export function errorMessage(e: unknown): string {
  return describeThrown(e).message;
}
