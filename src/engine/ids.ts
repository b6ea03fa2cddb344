import { createHash, randomFillSync } from "node:crypto";
import { SteadError } from "../errors.js";

const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

const ID_RANDOM_BYTES = 6;
/**
 * CSPRNG bytes drawn a pool at a time: one draw costs about as much per call as the whole of a
 * start's id otherwise would (a few µs on a VM), and a busy server makes thousands a second.
 */
const idPool = Buffer.alloc(ID_RANDOM_BYTES * 512);
let idPoolNext = idPool.byteLength;

/** A new run id: time-ordered prefix (sorts by creation) and 48 random bits. */
export function newRunId(): string {
  if (idPoolNext >= idPool.byteLength) {
    randomFillSync(idPool);
    idPoolNext = 0;
  }
  const random = idPool.toString("hex", idPoolNext, idPoolNext + ID_RANDOM_BYTES);
  idPoolNext += ID_RANDOM_BYTES;
  return `run_${Date.now().toString(36)}${random}`;
}

/**
 * Deterministic, so replaying the parent never creates a second child. The '.' is what makes the
 * id a child's: ids a caller chooses cannot hold one (`checkChosenRunId`), so no run but this
 * parent's child can hold it, unless a store written before that rule holds one already.
 */
export function childRunId(parentId: string, stepId: string): string {
  const part = SAFE.test(stepId) ? stepId : createHash("sha256").update(stepId).digest("hex").slice(0, 12);
  return `${parentId}.${part}`;
}

/** Not starting with `-`: every command the CLI prints with the id would read it as an option. */
export function isValidRunId(id: string): boolean {
  return /^[A-Za-z0-9_.:][A-Za-z0-9_.:-]{0,199}$/.test(id);
}

const RUN_ID_RULE = "use 1-200 characters: letters, digits, '_', '.', ':' or '-', not starting with '-'";

/** Refuses an id `isValidRunId` rejects; `what` names it ("run id", "session id"). */
export function checkRunId(id: string, what = "run id"): void {
  if (!isValidRunId(id)) throw new SteadError("STEAD_BAD_ID", `invalid ${what} ${idExcerpt(id, { quote: true })}`, { fix: RUN_ID_RULE });
}

const CHOSEN_RUN_ID_RULE = "choose an id without '.' (use '-', '_' or ':'): a child run's id is its parent's id, '.' and its step's id, and only a parent makes it";
/** RUN_ID_RULE for an id a caller chooses: '.' is a child's. */
const CHOSEN_RUN_ID_CHARACTERS = "use 1-200 characters: letters, digits, '_', ':' or '-', not starting with '-' ('.' is kept for a child run's id)";

/**
 * Refuses an id a caller chose for a new run (start, start by name, fork) unless it is valid and
 * holds no '.'. Hazard: an id in a child's shape (`<parent>.<step>`) made before its parent makes
 * it is a run the parent would find where its child belongs.
 */
export function checkChosenRunId(id: string): void {
  if (!isValidRunId(id)) throw new SteadError("STEAD_BAD_ID", `invalid run id ${idExcerpt(id, { quote: true })}`, { fix: CHOSEN_RUN_ID_CHARACTERS });
  if (id.includes(".")) {
    throw new SteadError("STEAD_BAD_ID", `run id ${idExcerpt(id, { quote: true })} holds '.', which only the id of a child run does (<parent id>.<step id>)`, { fix: CHOSEN_RUN_ID_RULE });
  }
}

const EXCERPT = 48;

/**
 * An id as a message echoes it: whole when short, else its first characters and its length, so
 * a 10 KB argument is not printed back. `quote` quotes it as JSON (an id that may hold anything).
 */
export function idExcerpt(id: string, options: { quote?: boolean } = {}): string {
  const q = (s: string) => (options.quote ? JSON.stringify(s) : s);
  return id.length <= 2 * EXCERPT ? q(id) : `${q(id.slice(0, EXCERPT))}… (${id.length} characters)`;
}
