/**
 * Who a request is: a bearer token, verified against the store's tokens (`stead.tokens.verify`),
 * and whether its role may take the route's action (`may`, the one table in engine/access).
 *
 * Invariant: a token is only ever read from the Authorization header or the body of a sign-in
 * (`POST /api/v1/auth/session`, browser-auth.ts), never from the query string, which proxies and
 * browsers log; a browser's cookie holds a session secret, not a token. A token never appears in a
 * response or a log line.
 */
import { SteadError } from "../errors.js";
import { actionsOf, requirePermission, type Action, type Role } from "../engine/access/roles.js";
import type { Stead } from "../stead/stead.js";

export interface Principal {
  /** The token's name: recorded as `by` with every decision this request makes. */
  readonly name: string;
  readonly role: Role;
}

/** Verifies a presented token; undefined: unknown, revoked or malformed (the server does not say which). */
export type Authenticate = (token: string) => Promise<Principal | undefined>;

/** The actions anyone on loopback may take without a token: reads only. */
const READS: ReadonlySet<Action> = new Set(["runs.read", "events.read", "sessions.read", "workspace.read", "definitions.read", "metrics.read"]);

/** What a caller may do: the actions of its token's role, or the anonymous reads (none where reads need a token). */
export function actionsFor(who: Principal | undefined, anonymousReads: boolean): Action[] {
  if (who !== undefined) return actionsOf(who.role);
  return anonymousReads ? [...READS] : [];
}

export function requireAccess(who: Principal | undefined, action: Action, anonymousReads: boolean): void {
  if (who === undefined) {
    if (anonymousReads && READS.has(action)) return;
    throw new SteadError("STEAD_TOKEN_REFUSED", "this request needs a token", { fix: "send `Authorization: Bearer <token>`; an admin creates one with `stead tokens create --role operator --name <you>`" });
  }
  requirePermission(`token ${who.name}`, who.role, action);
}

/** The bearer token of an Authorization header; undefined when there is none. Malformed: refused. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  const m = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/.exec(header);
  if (!m?.[1]) throw new SteadError("STEAD_TOKEN_REFUSED", "the Authorization header is not `Bearer <token>`", { fix: "send `Authorization: Bearer <token>`" });
  return m[1];
}

/** Authenticates against the instance's tokens (a refusal's reason stays in the server). */
export const tokensOf =
  (stead: Stead): Authenticate =>
  async (token) => {
    const check = await stead.tokens.verify(token);
    return check.ok ? { name: check.token.name, role: check.token.role } : undefined;
  };
