/**
 * Signing a browser in and out: `POST /api/v1/auth/session { token }` exchanges a valid token for
 * a session cookie (`HttpOnly; SameSite=Strict; Path=/`, `Secure` over https), and
 * `POST /api/v1/auth/logout` ends the session and clears the cookie. The token travels in the
 * body only (never a query string) and is in no response. The one-time login token `stead serve`
 * prints is exchanged at most once.
 */
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import { z } from "zod";
import { SteadError } from "../errors.js";
import { LOGIN_TOKEN_PREFIX } from "./login-token.js";
import { clearedCookie, sessionCookie } from "./browser-sessions.js";
import { verified, type Identify } from "./principal.js";

export const AUTH_SESSION_PATH = "/auth/session";
export const AUTH_LOGOUT_PATH = "/auth/logout";
/** `GET`: who the caller is (`name`, `role`, `actions`); app.ts serves it, since it reads the request's principal. */
export const AUTH_ME_PATH = "/auth/me";

const exchange = z.object({ token: z.string().min(1).max(512) }).strict();

export interface BrowserAuthOptions extends Identify {
  readonly prefix: string;
  readonly address: (c: Context) => string;
  readonly secure: (c: Context) => boolean;
  readonly body: (c: Context) => Promise<unknown>;
}

export function registerBrowserAuth(app: Hono, o: BrowserAuthOptions): void {
  let loginUsed = false;
  app.post(o.prefix + AUTH_SESSION_PATH, async (c) => {
    const parsed = exchange.safeParse(await o.body(c));
    if (!parsed.success) throw new SteadError("STEAD_BAD_OPTION", "body.token: a token is needed", { fix: "send { \"token\": \"<token>\" } as JSON", field: "body.token" });
    const who = await verified(o, o.address(c), parsed.data.token);
    if (who === undefined) {
      throw new SteadError("STEAD_TOKEN_REFUSED", "the token is unknown or revoked", { fix: "use a live token (`stead tokens list`), or the URL `stead serve` printed" });
    }
    if (who.name.startsWith(LOGIN_TOKEN_PREFIX) && who.name !== o.loginTokenName) {
      // Only the server that printed a login link knows whether it was used: another server on the store refuses it.
      throw new SteadError("STEAD_TOKEN_REFUSED", "this login link belongs to another `stead serve`", { fix: "open the URL this server printed, or sign in with a token of your own" });
    }
    if (who.name === o.loginTokenName) {
      if (loginUsed) throw new SteadError("STEAD_TOKEN_REFUSED", "this login link was used already", { fix: "restart `stead serve` for a new link, or sign in with a token of your own" });
      loginUsed = true;
    }
    const previous = getCookie(c, o.sessions.cookieName);
    if (previous) o.sessions.close(previous);
    const s = o.sessions.open(parsed.data.token);
    c.header("Set-Cookie", sessionCookie(o.sessions.cookieName, s.secret, s.maxAgeS, o.secure(c)));
    return c.json({ name: who.name, role: who.role, expiresAt: new Date(s.expiresAt).toISOString() });
  });
  app.post(o.prefix + AUTH_LOGOUT_PATH, (c) => {
    const secret = getCookie(c, o.sessions.cookieName);
    if (secret) o.sessions.close(secret);
    c.header("Set-Cookie", clearedCookie(o.sessions.cookieName, o.secure(c)));
    return c.json({ ok: true });
  });
}
