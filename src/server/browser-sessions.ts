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
 * Bounded per token: a token holds at most MAX_PER_TOKEN sessions, and its next sign-in drops that
 * token's own oldest, so signing in over and over (any token holder, a viewer's included) signs no
 * one else out. Bounded in all: past MAX_SESSIONS, ended sessions are swept, then the oldest
 * session of the token holding the most is dropped. Secrets are looked up by their SHA-256, so the
 * map's keys are not the secrets a browser holds.
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
/** Sessions one token may hold at once (its browsers and devices). */
export const MAX_PER_TOKEN = 20;
/** Sessions kept in all (about 200 bytes each). */
export const MAX_SESSIONS = 10_000;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

const digest = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export class BrowserSessions {
  private readonly sessions = new Map<string, { token: string; expiresAt: number }>();
  /** Each token's session keys, oldest first; a token with none has no entry. */
  private readonly byToken = new Map<string, Set<string>>();

  constructor(
    private readonly ttlMs = BROWSER_SESSION_TTL_MS,
    /** The name of the cookie that carries a session's secret (`sessionCookieName`). */
    readonly cookieName = SESSION_COOKIE,
  ) {}

  /** A new session for `token` (already verified): its secret, for the cookie, and when it ends. */
  open(token: string, now = Date.now()): { secret: string; expiresAt: number; maxAgeS: number } {
    const secret = randomBytes(32).toString("base64url");
    const expiresAt = now + this.ttlMs;
    const key = digest(secret);
    this.sessions.set(key, { token, expiresAt });
    const own = this.byToken.get(token) ?? new Set<string>();
    this.byToken.set(token, own.add(key));
    while (own.size > MAX_PER_TOKEN) this.drop(own.values().next().value);
    if (this.sessions.size > MAX_SESSIONS) this.shed(now);
    return { secret, expiresAt, maxAgeS: Math.floor(this.ttlMs / 1000) };
  }

  /** Past MAX_SESSIONS: ended sessions go, then the largest holder's oldest, never a lone session before a crowd's. */
  private shed(now: number): void {
    for (const [key, s] of this.sessions) if (s.expiresAt <= now) this.drop(key);
    while (this.sessions.size > MAX_SESSIONS) {
      let largest: Set<string> | undefined;
      for (const keys of this.byToken.values()) if (largest === undefined || keys.size > largest.size) largest = keys;
      this.drop(largest?.values().next().value);
    }
  }

  private drop(key: string | undefined): void {
    if (key === undefined) return;
    const s = this.sessions.get(key);
    if (!s) return;
    this.sessions.delete(key);
    const own = this.byToken.get(s.token);
    own?.delete(key);
    if (own?.size === 0) this.byToken.delete(s.token);
  }

  /** The token a live session secret stands for; undefined for an unknown, malformed or expired one. */
  token(secret: string, now = Date.now()): string | undefined {
    if (!SECRET.test(secret)) return undefined;
    const key = digest(secret);
    const s = this.sessions.get(key);
    if (!s) return undefined;
    if (s.expiresAt <= now) {
      this.drop(key);
      return undefined;
    }
    return s.token;
  }

  close(secret: string): void {
    if (SECRET.test(secret)) this.drop(digest(secret));
  }
}

/** The Set-Cookie value of a session; `secure` when the browser reached the server over https. */
export function sessionCookie(name: string, secret: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? "; Secure" : ""}`;
}

export function clearedCookie(name: string, secure: boolean): string {
  return `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}
