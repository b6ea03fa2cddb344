/**
 * The one-time browser login `stead serve` prints (`http://127.0.0.1:7420/#token=…`): an operator
 * token made through the control API's tokens, named `serve-login.<time>.<random>`, made by
 * "stead serve". It is good only for one exchange at `POST /api/v1/auth/session` (never as a
 * bearer token), and lives at most LOGIN_TTL_MS: the server revokes it then, or when it stops.
 * A server that died without stopping leaves its token unrevoked; the next `stead serve` on the
 * store revokes every such token older than LOGIN_TTL_MS (tokens have no expiry of their own).
 *
 * The token is in the fragment, which a browser never sends to a server or in a Referer.
 */
import { randomBytes } from "node:crypto";
import type { Stead } from "../stead/stead.js";
import { BROWSER_SESSION_TTL_MS } from "./browser-sessions.js";

export const LOGIN_TOKEN_PREFIX = "serve-login.";
/** How long a login token lives: as long as the browser session it is exchanged for. */
export const LOGIN_TTL_MS = BROWSER_SESSION_TTL_MS;
const BY = "stead serve";

export interface LoginToken {
  readonly name: string;
  /** The secret: printed once in the URL's fragment, never logged. */
  readonly token: string;
  readonly expiresAt: number;
}

export async function mintLoginToken(stead: Stead, now = Date.now()): Promise<LoginToken> {
  const name = `${LOGIN_TOKEN_PREFIX}${now.toString(36)}.${randomBytes(4).toString("hex")}`;
  const created = await stead.tokens.create({ name, role: "operator", by: BY });
  return { name, token: created.token, expiresAt: now + LOGIN_TTL_MS };
}

export async function revokeLoginToken(stead: Stead, name: string): Promise<void> {
  await stead.tokens.revoke(name, { by: BY });
}

/** Revokes login tokens older than LOGIN_TTL_MS still live (left by a server that did not stop); their names. */
export async function sweepLoginTokens(stead: Stead, now = Date.now()): Promise<string[]> {
  const stale = (await stead.tokens.list()).filter((t) => t.name.startsWith(LOGIN_TOKEN_PREFIX) && t.revokedAt === null && t.createdAt + LOGIN_TTL_MS <= now);
  for (const t of stale) await stead.tokens.revoke(t.name, { by: BY });
  return stale.map((t) => t.name);
}

/** The URL to open: the server's base URL (or, behind a proxy, its public https name) with the token in the fragment. */
export function loginUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, "")}/#token=${token}`;
}
