/**
 * Browser sessions: a token exchanged once (`POST /api/v1/auth/session`) for a cookie that holds
 * a random session secret, never the token. The secret maps, in this process's memory only, to
 * the token it was exchanged for; each request with the cookie verifies that token again, so a
 * revoked token ends its browser sessions at once, and a restart of the server ends them all.
 *
 * Why a random secret and not the token or a signed value: a cookie is kept in the browser's
 * profile on disk and shown in its developer tools; a leaked token works from anywhere with
 * `Authorization: Bearer` until revoked, a leaked session secret only as this cookie, on this
 * server, until it expires or logs out. A signed value could not be withdrawn by logging out
 * (only by changing the key, which logs everyone out); a server-side entry is simply deleted.
 *
 * Bounded: at most MAX_SESSIONS are kept, the oldest dropped first. Secrets are looked up by their
 * SHA-256, so the map's keys are not the secrets a browser holds.
 */
import { createHash, randomBytes } from "node:crypto";

export const SESSION_COOKIE = "stead_session";
/**
 * The cookie's name for a server on `port`. Browsers send a host's cookies to every port of it,
 * so servers on one host name would overwrite each other's cookie (and each turn the other's
 * away) if they shared a name. Other programs listening on that host still see the cookie.
 */
export const sessionCookieName = (port: number | undefined): string => (port === undefined ? SESSION_COOKIE : `${SESSION_COOKIE}_${port}`);
/** How long a browser session lasts from its exchange (its cookie's Max-Age). */
export const BROWSER_SESSION_TTL_MS = 12 * 60 * 60_000;
const MAX_SESSIONS = 1_000;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

const digest = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export class BrowserSessions {
  private readonly sessions = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    private readonly ttlMs = BROWSER_SESSION_TTL_MS,
    /** The name of the cookie that carries a session's secret (`sessionCookieName`). */
    readonly cookieName = SESSION_COOKIE,
  ) {}

  /** A new session for `token` (already verified): its secret, for the cookie, and when it ends. */
  open(token: string, now = Date.now()): { secret: string; expiresAt: number; maxAgeS: number } {
    const secret = randomBytes(32).toString("base64url");
    const expiresAt = now + this.ttlMs;
    this.sessions.set(digest(secret), { token, expiresAt });
    while (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    return { secret, expiresAt, maxAgeS: Math.floor(this.ttlMs / 1000) };
  }

  /** The token a live session secret stands for; undefined for an unknown, malformed or expired one. */
  token(secret: string, now = Date.now()): string | undefined {
    if (!SECRET.test(secret)) return undefined;
    const key = digest(secret);
    const s = this.sessions.get(key);
    if (!s) return undefined;
    if (s.expiresAt <= now) {
      this.sessions.delete(key);
      return undefined;
    }
    return s.token;
  }

  close(secret: string): void {
    if (SECRET.test(secret)) this.sessions.delete(digest(secret));
  }
}

/** The Set-Cookie value of a session; `secure` when the browser reached the server over https. */
export function sessionCookie(name: string, secret: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
}

export function clearedCookie(name: string, secure: boolean): string {
  return `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}
