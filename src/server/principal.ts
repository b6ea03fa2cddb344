/**
 * Who a request is: the token of its `Authorization: Bearer` header, or else the token its
 * browser-session cookie was exchanged for (browser-sessions.ts), verified again at every request.
 * A bad token from an address is answered ever more slowly, and only a few at once (slowdown.ts);
 * an unknown session is refused at once (its secret cannot be guessed).
 *
 * Invariant: a refusal never quotes what was presented.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { SteadError } from "../errors.js";
import { bearerToken, type Authenticate, type Principal } from "./auth.js";
import type { BrowserSessions } from "./browser-sessions.js";
import { LOGIN_TOKEN_PREFIX } from "./login-token.js";
import type { BadTokenSlowdown } from "./slowdown.js";

export interface Identify {
  readonly authenticate: Authenticate;
  readonly slowdown: BadTokenSlowdown;
  readonly sessions: BrowserSessions;
  /** The name of the one-time login token (`stead serve`'s printed URL): good only for exchange at /api/v1/auth/session. */
  readonly loginTokenName?: string | undefined;
}

export interface Identified {
  readonly who: Principal | undefined;
  /** How: a bearer token, a browser session's cookie, or neither (anonymous). */
  readonly via: "bearer" | "cookie" | "none";
}

const refused = (message: string, fix: string) => new SteadError("STEAD_TOKEN_REFUSED", message, { fix });

export async function identify(c: Context, id: Identify, address: string): Promise<Identified> {
  const token = bearerToken(c.req.header("authorization"));
  if (token !== undefined) {
    const who = await verified(id, address, token);
    if (who === undefined) throw refused("the token is unknown or revoked", "use a live token (`stead tokens list`)");
    // Every server refuses every login token as a bearer token, not only the server that made it.
    if (who.name.startsWith(LOGIN_TOKEN_PREFIX)) {
      throw refused("this token is a one-time browser login, not a bearer token", "open the URL `stead serve` printed in a browser, or use a token of your own");
    }
    return { who, via: "bearer" };
  }
  const secret = getCookie(c, id.sessions.cookieName);
  if (secret === undefined || secret === "") return { who: undefined, via: "none" };
  const held = id.sessions.token(secret);
  const who = held === undefined ? undefined : await id.authenticate(held);
  if (who === undefined) {
    // Expired, logged out, from a server since restarted, or its token revoked. Not slowed down:
    // a secret is 256 random bits, so there is nothing to guess, and a stale cookie is common.
    id.sessions.close(secret);
    throw refused("the browser session is unknown or has ended", "sign in again (POST /api/v1/auth/session with a token), or send `Authorization: Bearer <token>`");
  }
  return { who, via: "cookie" };
}

/**
 * A presented token's principal, held to the address's bound on guesses (slowdown.ts): refused 429
 * before it is read while the address is over it; undefined (after the slowdown's wait) when bad.
 */
export async function verified(id: Pick<Identify, "authenticate" | "slowdown">, address: string, token: string): Promise<Principal | undefined> {
  const admitted = id.slowdown.admit(address);
  let who: Principal | undefined;
  try {
    who = await id.authenticate(token);
  } catch (e) {
    id.slowdown.release(admitted);
    throw e;
  }
  if (who === undefined) await id.slowdown.failed(admitted);
  else id.slowdown.release(admitted);
  return who;
}
