/**
 * Access tokens through the control API (`stead.tokens`): create (the secret shown once), list,
 * revoke, and verify a presented secret. The CLI's `stead tokens` and the server call these; none
 * of them reaches the store's tokens directly.
 *
 * A token's own row is its record of who did what: who made it and when, who revoked it and
 * when. Tokens belong to no run, so their changes are not run events.
 */
import { randomBytes } from "node:crypto";
import { SteadError } from "../../errors.js";
import { holdsToken } from "../../redaction/redact.js";
import type { TokenRecord, TokenStore } from "../../store/types.js";
import type { Replayable } from "../control/idempotency.js";
import { idExcerpt } from "../ids.js";
import { checkRole, isRole, type Role } from "./roles.js";
import { isWellFormedToken, newTokenSecret, sameDigest, tokenHash } from "./token-secret.js";

/**
 * A token's last use is written at most once per this interval: a write on every request would
 * turn each read into a write (SQLite serialises writers) for a mark people read in minutes.
 */
export const TOKEN_TOUCH_INTERVAL_MS = 60_000;

/** A token as people and programs see it: never its secret, never its hash. Times in ms since the epoch. */
export interface TokenInfo {
  id: string;
  name: string;
  /** As stored; one of ROLES unless a newer Stead wrote it (such a token is refused by verify). */
  role: string;
  createdAt: number;
  createdBy: string | null;
  /** Coarse: within TOKEN_TOUCH_INTERVAL_MS of the last verified use. */
  lastUsedAt: number | null;
  revokedAt: number | null;
  revokedBy: string | null;
}

/** A new token: its record, and the secret, which is shown this once and never stored. */
export type CreatedToken = TokenInfo & { token: string };

export type TokenRefusal = "missing" | "malformed" | "unknown" | "revoked" | "role";

/** What verifying a presented secret found: whose token it is, or why it is refused. */
export type TokenCheck = { ok: true; token: { id: string; name: string; role: Role } } | { ok: false; reason: TokenRefusal };

/** What the tokens need of the instance that holds them. */
export interface TokenHost {
  readonly store: TokenStore;
  ready(): Promise<void>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$/;
const NAME_RULE = "use 1-64 characters: letters, digits, '_', '.', '@', '+' or '-', starting with a letter or digit";

/** A token name given by a caller, checked: STEAD_BAD_OPTION otherwise. */
export function checkTokenName(name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new SteadError("STEAD_BAD_OPTION", `invalid token name ${typeof name === "string" ? idExcerpt(name, { quote: true }) : String(typeof name)}`, { fix: NAME_RULE });
  }
  // A name shaped like a secret would be redacted wherever it is shown, and may be one pasted by mistake.
  if (holdsToken(name)) throw new SteadError("STEAD_BAD_OPTION", "a token name must not look like a token", { fix: `name it for who holds it (${NAME_RULE})` });
  return name;
}

const info = (r: TokenRecord): TokenInfo => ({
  id: r.id,
  name: r.name,
  role: r.role,
  createdAt: r.createdAt,
  createdBy: r.createdBy,
  lastUsedAt: r.lastUsedAt,
  revokedAt: r.revokedAt,
  revokedBy: r.revokedBy,
});

const newTokenId = (): string => `tok_${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;

/** A refusal as the error a skin answers with (HTTP 401). It never quotes what was presented. */
export function tokenRefused(reason: TokenRefusal): SteadError {
  const why: Record<TokenRefusal, string> = {
    missing: "no token was presented",
    malformed: "the token presented is not a Stead token (one is `stead_` and 43 base64url characters)",
    unknown: "the token presented is not one this store knows",
    revoked: "the token presented was revoked",
    role: "the token presented has a role this Stead does not know",
  };
  return new SteadError("STEAD_TOKEN_REFUSED", why[reason], { reason, fix: "present a valid token of your own; an admin creates one with `stead tokens create --role <role> --name <name>`" });
}

export class Tokens {
  constructor(private readonly host: TokenHost) {}

  /**
   * Makes a token for `name` with `role`; its secret is in the result and nowhere else. Refused,
   * with nothing written: an invalid name or role (STEAD_BAD_OPTION), a name a token that is not
   * revoked has (STEAD_ID_TAKEN).
   */
  async create(options: { name: string; role: Role; by?: string | null }): Promise<CreatedToken> {
    const name = checkTokenName(options.name);
    const role = checkRole(options.role);
    await this.host.ready();
    const token = newTokenSecret();
    const record = await this.host.store.createToken({ id: newTokenId(), name, role, hash: tokenHash(token), createdAt: Date.now(), createdBy: options.by ?? null });
    return { ...info(record), token };
  }

  /** Every token, revoked ones included, oldest first. */
  async list(): Promise<TokenInfo[]> {
    await this.host.ready();
    return (await this.host.store.listTokens()).map(info);
  }

  /**
   * Revokes the token named `name`: it is refused from now on. Revoking one revoked already
   * succeeds (`already`, naming who revoked it and when); a name no token ever had is
   * STEAD_TOKEN_NOT_FOUND. Nothing changes but the one token.
   */
  async revoke(name: string, options: { by?: string | null } = {}): Promise<Replayable<TokenInfo>> {
    await this.host.ready();
    const revoked = await this.host.store.revokeToken(name, options.by ?? null, Date.now());
    if (revoked) return { ...info(revoked), already: false };
    const earlier = (await this.host.store.listTokens()).filter((t) => t.name === name && t.revokedAt !== null);
    const last = earlier[earlier.length - 1];
    if (last) return { ...info(last), already: true };
    throw new SteadError("STEAD_TOKEN_NOT_FOUND", `no token is named ${idExcerpt(name, { quote: true })}`, { token: name, fix: "list tokens with `stead tokens list`" });
  }

  /**
   * Whose token `presented` is, or why it is refused. Never throws for what was presented (only
   * for a store that cannot be read), and the refusal does not echo it.
   */
  async verify(presented: unknown): Promise<TokenCheck> {
    if (presented === undefined || presented === null || presented === "") return { ok: false, reason: "missing" };
    if (!isWellFormedToken(presented)) return { ok: false, reason: "malformed" };
    await this.host.ready();
    const digest = tokenHash(presented);
    const row = await this.host.store.findTokenByHash(digest);
    if (!row || !sameDigest(row.hash, digest)) return { ok: false, reason: "unknown" };
    if (row.revokedAt !== null) return { ok: false, reason: "revoked" };
    if (!isRole(row.role)) return { ok: false, reason: "role" };
    const now = Date.now();
    if (row.lastUsedAt === null || now - row.lastUsedAt >= TOKEN_TOUCH_INTERVAL_MS) {
      // The mark is advisory: a store that cannot write now (full, read-only) must still let a
      // valid token read, so a failed touch leaves the mark older and refuses nothing.
      await this.host.store.touchToken(row.id, now, TOKEN_TOUCH_INTERVAL_MS).catch(() => false);
    }
    return { ok: true, token: { id: row.id, name: row.name, role: row.role } };
  }
}
