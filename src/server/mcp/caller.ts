/**
 * Who calls the MCP server, and what each call may do: over HTTP, the request's token (or, on
 * loopback, nobody: reads only), checked by `requireAccess` (auth.ts, the roles table) at every
 * tool call and resource read; over stdio, the local user, who holds the store already and may
 * do what the CLI may, or only read with `--read-only`.
 */
import { requirePermission, type Action } from "../../engine/access/roles.js";
import { requireAccess, type Principal } from "../auth.js";

export interface McpCaller {
  /** Refuses, with a SteadError, an action this caller may not take. */
  authorize(action: Action): void;
  /** Recorded as `by` with every decision: a token's name, or the local user. */
  readonly by: string | null;
}

/** A caller over HTTP: the token's principal, or undefined (anonymous, reads only where `anonymousReads`). */
export const tokenCaller = (who: Principal | undefined, anonymousReads: boolean): McpCaller => ({
  authorize: (action) => requireAccess(who, action, anonymousReads),
  by: who?.name ?? null,
});

/** The local user over stdio, recorded as `by`; `readOnly`: a viewer's reads only. */
export const localCaller = (by: string, readOnly: boolean): McpCaller => ({
  authorize: (action) => {
    if (readOnly) requirePermission("stead mcp --read-only", "viewer", action);
  },
  by,
});
