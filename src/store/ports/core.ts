import type { ClaimsAndLeases } from "./claims.js";
import type { Commits } from "./commits.js";
import type { StoreLifecycle } from "./lifecycle.js";
import type { RunReads } from "./run-reads.js";
import type { Store } from "./store.js";

/**
 * The core a store must have: what a worker needs to open it, claim a run, commit its steps and
 * read it back. Every other port is a capability (CAPABILITIES): a store of one's own may leave
 * one out, and what needs it is refused, naming it, instead of failing somewhere inside.
 */
export interface CoreStore extends StoreLifecycle, RunReads, Commits, ClaimsAndLeases {}

/** The core's members that must be there (its optional tuning members may be absent). */
export const CORE_MEMBERS = [
  "migrate",
  "check",
  "close",
  "getRun",
  "listRuns",
  "countRuns",
  "runActivity",
  "completedStep",
  "journal",
  "waits",
  "dueTimers",
  "holds",
  "events",
  "eventsAfter",
  "listSessions",
  "createRun",
  "commit",
  "claim",
  "claimable",
  "renewLeases",
  "leasesOnHost",
  "expireLease",
] as const satisfies readonly (keyof CoreStore)[];

/**
 * Each capability port by name (the conformance concern that tests it), the members that make it,
 * and what needs it: a store implements all of a port's members or none. Ports already optional
 * in Store (worker presence, wake-ups, reserves, backups, erasure) are checked where they are used.
 */
export const CAPABILITIES = {
  "idempotency-keys": { members: ["idempotencyKey", "pruneIdempotencyKeys"], needed: "control commands with an idempotency key" },
  definitions: { members: ["announceDefinitions", "refreshAnnouncements", "withdrawAnnouncements", "listDefinitions", "pruneAnnouncements"], needed: "workers announcing what they serve, and starts by name" },
  "snapshots-blobs": {
    members: ["putBlobs", "missingBlobs", "getBlobs", "snapshots", "getSnapshot", "snapshotRoots", "pruneSnapshots", "storeTime", "listBlobs", "deleteBlobs"],
    needed: "workspaces (snapshots, restore, diff, gc)",
  },
  "storage-room": { members: ["checkStorage"], needed: "the storage guard of a full store" },
  tokens: { members: ["createToken", "listTokens", "revokeToken", "findTokenByHash", "touchToken"], needed: "access tokens (stead serve, the console, MCP over HTTP)" },
  "data-keys": { members: ["dataKeys", "addDataKeys", "rewrapDataKeys", "replaceDataKeys"], needed: "encryption at rest" },
  tallies: { members: ["tally"], needed: "metrics" },
  "transfer-rows": { members: ["readRows", "writeRows"], needed: "export and import" },
  retention: { members: ["finishedRoots", "deleteRunTrees"], needed: "retention (stead gc --finished-before)" },
} as const satisfies Record<string, { members: readonly (keyof Store)[]; needed: string }>;

export type Capability = keyof typeof CAPABILITIES;

type Listed = (typeof CORE_MEMBERS)[number] | (typeof CAPABILITIES)[Capability]["members"][number];
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** Every required member of Store is in the core or in one capability: a new one must be placed. */
export type Unplaced = Exclude<RequiredKeys<Store>, Listed | "dialect" | "location" | "leaseClock">;
const placed: [Unplaced] extends [never] ? true : Unplaced = true;
void placed;
