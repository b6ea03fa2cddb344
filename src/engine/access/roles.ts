/**
 * Roles and what each may do: the one table. The HTTP server, the MCP server and anything else
 * that authorises a caller asks `may(role, action)`; none keeps a list of its own. A new route or
 * tool names one of these actions (or adds a row here first).
 *
 * Roles are ranked: each may do everything the one below it may, and more. `viewer` reads;
 * `operator` also decides what happens to runs; `admin` also manages tokens.
 */
import { SteadError } from "../../errors.js";

export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Readonly<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/** Every action, the least role that may take it, and what it covers. */
export const ACTIONS = {
  // viewer: every read.
  "runs.read": { least: "viewer", what: "list runs; read one in full: fields, journal, waits, holds, output or error, why" },
  "events.read": { least: "viewer", what: "read and follow events: one run's, one session's, the whole store's" },
  "sessions.read": { least: "viewer", what: "list sessions; read a session's transcript" },
  "workspace.read": { least: "viewer", what: "a run's snapshots, file trees and contents at a step, diffs, tarballs" },
  "definitions.read": { least: "viewer", what: "the definitions workers serve, and which workers are alive" },
  "metrics.read": { least: "viewer", what: "Prometheus metrics: counts of runs, open waits and holds; workers' claims, takeovers, lease losses, commit latency" },

  // operator: answer waits, release holds, and start, stop and bring back runs.
  "runs.start": { least: "operator", what: "start a run of a definition" },
  "runs.fork": { least: "operator", what: "fork a run: a new run reusing its journal up to a step" },
  "runs.pause": { least: "operator", what: "pause a run" },
  "runs.resume": { least: "operator", what: "resume a paused or cancelled run, or accept a changed definition" },
  "runs.cancel": { least: "operator", what: "cancel a run and its unfinished children" },
  "runs.retry": { least: "operator", what: "give a failed run's failed step a new attempt" },
  "waits.approve": { least: "operator", what: "approve what a run waits for (with edits, where its request allows them)" },
  "waits.deny": { least: "operator", what: "deny what a run waits for" },
  "waits.signal": { least: "operator", what: "deliver a signal a run waits for" },
  "holds.release": { least: "operator", what: "release a run's hold by one of its ways out" },
  "sessions.send": { least: "operator", what: "send a session a message: queue its next turn" },
  "workspace.restore": { least: "operator", what: "write a snapshot's files into a directory of the machine the MCP server runs on (stdio only)" },

  // admin: tokens.
  "tokens.create": { least: "admin", what: "create a token (its secret is shown once)" },
  "tokens.list": { least: "admin", what: "list tokens: names, roles, when made, last used, revoked (never a secret or a hash)" },
  "tokens.revoke": { least: "admin", what: "revoke a token" },
} as const satisfies Record<string, { least: Role; what: string }>;

export type Action = keyof typeof ACTIONS;

export const isRole = (v: unknown): v is Role => typeof v === "string" && Object.hasOwn(RANK, v);
export const isAction = (v: unknown): v is Action => typeof v === "string" && Object.hasOwn(ACTIONS, v);

/**
 * Whether `role` may take `action`. Pure. Fails closed: a role or action this table does not
 * know (a value that came from outside the type system) may nothing.
 */
export function may(role: Role, action: Action): boolean {
  if (!isRole(role) || !isAction(action)) return false;
  return RANK[role] >= RANK[ACTIONS[action].least];
}

/** The actions `role` may take, in the table's order. */
export function actionsOf(role: Role): Action[] {
  return (Object.keys(ACTIONS) as Action[]).filter((a) => may(role, a));
}

/** A role given by a caller, checked: STEAD_BAD_OPTION naming the roles otherwise. */
export function checkRole(role: unknown): Role {
  if (isRole(role)) return role;
  const shown = typeof role === "string" ? JSON.stringify(role.slice(0, 40)) : String(typeof role);
  throw new SteadError("STEAD_BAD_OPTION", `${shown} is not a role; a token's role is one of ${ROLES.join(", ")}`, {
    fix: "choose viewer (reads only), operator (also answers waits, releases holds, starts, stops and sends) or admin (also manages tokens)",
  });
}

/**
 * Refuses `action` to a caller whose role does not permit it: STEAD_NOT_PERMITTED naming the
 * caller, the action and the least role that may take it. `who` names the caller (a token's name).
 */
export function requirePermission(who: string, role: Role, action: Action): void {
  if (may(role, action)) return;
  const least = isAction(action) ? ACTIONS[action].least : "a role Stead knows";
  throw new SteadError("STEAD_NOT_PERMITTED", `${who} (${isRole(role) ? role : "no known role"}) may not ${isAction(action) ? action : "do that"}: it takes ${least}`, {
    fix: `use a token whose role is ${least}${least === "admin" ? "" : " or above"} (an admin creates one: stead tokens create --role ${least} --name <name>)`,
  });
}
