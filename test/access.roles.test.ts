/**
 * Roles and permissions: the one table (src/engine/access/roles.ts) against the roles as issue 11
 * defines them, written out here by hand so a row moved in the table fails: viewer reads;
 * operator also answers waits, releases holds, starts, pauses, resumes, cancels, retries, forks
 * and sends, and writes a snapshot to disk over MCP stdio; admin also manages tokens.
 */
import { describe, expect, it } from "vitest";
import { ACTIONS, actionsOf, may, ROLES, SteadError, type Action, type Role } from "../src/index.js";
import { checkRole, requirePermission } from "../src/engine/access/index.js";

const READS: Action[] = ["runs.read", "events.read", "sessions.read", "workspace.read", "definitions.read", "metrics.read"];
const DECISIONS: Action[] = [
  "waits.approve",
  "waits.deny",
  "waits.signal",
  "holds.release",
  "runs.start",
  "runs.pause",
  "runs.resume",
  "runs.cancel",
  "runs.retry",
  "runs.fork",
  "sessions.send",
  "workspace.restore",
];
const TOKENS: Action[] = ["tokens.create", "tokens.list", "tokens.revoke"];

const EXPECTED: Record<Role, Action[]> = {
  viewer: READS,
  operator: [...READS, ...DECISIONS],
  admin: [...READS, ...DECISIONS, ...TOKENS],
};

describe("may(role, action)", () => {
  it("the table names exactly the reads, the decisions and the token actions", () => {
    expect(Object.keys(ACTIONS).sort()).toEqual([...READS, ...DECISIONS, ...TOKENS].sort());
    expect([...ROLES]).toEqual(["viewer", "operator", "admin"]);
  });

  it.each(ROLES.map((r) => [r]))("%s may exactly its actions", (role) => {
    for (const action of Object.keys(ACTIONS) as Action[]) expect(may(role, action), `${role} ${action}`).toBe(EXPECTED[role].includes(action));
    expect(actionsOf(role).sort()).toEqual([...EXPECTED[role]].sort());
  });

  it("each role may everything the one below it may", () => {
    for (const a of actionsOf("viewer")) expect(may("operator", a)).toBe(true);
    for (const a of actionsOf("operator")) expect(may("admin", a)).toBe(true);
  });

  it("fails closed on a role or action it does not know (values from outside the type system)", () => {
    const unknownRole = "root" as Role;
    const unknownAction = "runs.delete" as Action;
    expect(may(unknownRole, "runs.read")).toBe(false);
    expect(may("admin", unknownAction)).toBe(false);
    expect(may("__proto__" as Role, "runs.read")).toBe(false);
    expect(may("admin", "toString" as Action)).toBe(false);
  });
});

describe("refusals", () => {
  it("an unknown role is STEAD_BAD_OPTION naming the roles", () => {
    expect(checkRole("operator")).toBe("operator");
    let e: unknown;
    try {
      checkRole("superuser");
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(SteadError);
    expect(e).toMatchObject({ code: "STEAD_BAD_OPTION", message: expect.stringMatching(/"superuser" is not a role; .*viewer, operator, admin/) as unknown });
  });

  it("an action the role does not permit is STEAD_NOT_PERMITTED naming who, the action and the least role", () => {
    expect(() => requirePermission("alice", "operator", "waits.approve")).not.toThrow();
    let e: unknown;
    try {
      requirePermission("vera", "viewer", "waits.approve");
    } catch (x) {
      e = x;
    }
    expect(e).toMatchObject({ code: "STEAD_NOT_PERMITTED", message: "vera (viewer) may not waits.approve: it takes operator" });
    expect((e as SteadError).fix).toMatch(/--role operator/);
  });
});
