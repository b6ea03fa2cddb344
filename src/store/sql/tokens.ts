/**
 * The token statements both SQL stores share, written once with `?` (see dialect.ts). Only
 * TOKEN_BY_HASH reads the hash column: every other read names its columns without it, so a
 * hash never leaves the store but to the lookup that already knows it.
 */
import { indexPredicate, TABLES } from "../schema/tables.js";
import type { TokenWrite } from "../records.js";

/** Every column of `tokens` but `hash`. */
const RECORD_COLUMNS = TABLES.tokens.columns
  .map((c) => c.name)
  .filter((n) => n !== "hash")
  .join(", ");

/**
 * Parameters: id, name, role, hash, created_at, created_by. Writes nothing when a token that is
 * not revoked has the name: the conflict target is the partial unique index, whose predicate it
 * repeats word for word (both dialects infer the index from it).
 */
export const INSERT_TOKEN = `INSERT INTO tokens (id, name, role, hash, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (name) WHERE ${indexPredicate("tokens", "tokens_active_name")} DO NOTHING`;

export const LIST_TOKENS = `SELECT ${RECORD_COLUMNS} FROM tokens ORDER BY created_at, id`;

/** Parameters: revoked_at, revoked_by, name. */
export const REVOKE_TOKEN = `UPDATE tokens SET revoked_at = ?, revoked_by = ? WHERE name = ? AND ${indexPredicate("tokens", "tokens_active_name")} RETURNING ${RECORD_COLUMNS}`;

export const TOKEN_BY_HASH = "SELECT * FROM tokens WHERE hash = ?";

/**
 * Whether `row` (read back by the new token's hash after INSERT_TOKEN) is that insert's. A write
 * retried after its reply was lost finds its own row, not a conflict; a name conflict finds none.
 */
export const isWriteOf = (row: Record<string, unknown>, t: TokenWrite): boolean => row.id === t.id && row.name === t.name;

/** Parameters: at, id, at - minIntervalMs. Never moves a later mark back. */
export const TOUCH_TOKEN = "UPDATE tokens SET last_used_at = ? WHERE id = ? AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at <= ?)";
