/**
 * Access tokens: rows holding a token's name, role and the SHA-256 of its secret (never the
 * secret). The engine makes and checks tokens (engine/access/); the store keeps them, keeps a
 * name unique among the tokens not revoked, and hands a hash out only to a lookup by that hash.
 * Times are the caller's (`at`, ms since the epoch): they are records for people, not leases.
 */
import type { TokenRecord, TokenRow, TokenWrite } from "../records.js";

export interface TokenStore {
  /**
   * Records a new token and returns it (without its hash). Refused with STEAD_ID_TAKEN when a
   * token that is not revoked has its name, and nothing is written.
   */
  createToken(t: TokenWrite): Promise<TokenRecord>;

  /** Every token, revoked ones included, oldest first. Never a hash. */
  listTokens(): Promise<TokenRecord[]>;

  /**
   * Revokes the token named `name` that is not revoked, recording who and when; returns it as it
   * now is. Undefined, with nothing written, when no token of that name is unrevoked.
   */
  revokeToken(name: string, by: string | null, at: number): Promise<TokenRecord | undefined>;

  /** The token, revoked or not, whose hash is `hash` (64 lower-case hex digits), hash included. */
  findTokenByHash(hash: string): Promise<TokenRow | undefined>;

  /**
   * Sets an unrevoked token's last use to `at` unless it is already later than `at -
   * minIntervalMs` (so concurrent touches write once per interval). True when it wrote.
   */
  touchToken(id: string, at: number, minIntervalMs: number): Promise<boolean>;
}
