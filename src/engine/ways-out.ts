/**
 * A way out of where a run is, as data: the control call that takes it (its verb, the run, the
 * arguments the engine knows) and the arguments only a person can give (`supply`). The engine
 * never writes a command line: each skin renders a way out in its own terms (the CLI as a
 * `stead …` command, the HTTP API as a route, MCP as a tool call).
 */
import type { HoldKind } from "../store/types.js";
import type { ReleaseChoice } from "./holds.js";

interface Way<V extends string, A extends object, S extends string = never> {
  /** What taking it does, for a person. */
  what: string;
  verb: V;
  /** The run it acts on: the explained run, or (`why` of a child) the child. */
  runId: string;
  args: A;
  /**
   * Arguments of the call a person must supply, by the control API's names (`approve`'s `input`,
   * `deny`'s `reason`, `signal`'s `payload`, `release`'s `result`). Empty when the call is complete.
   */
  supply: readonly S[];
}

type NoArgs = Record<string, never>;

/** Make sure a worker that has the run's definition runs (`module`: the file the run recorded, when known). */
export type StartWorker = Way<"worker", { definition: string; module: string | null }>;
/** Follow the run's events as they happen. */
export type FollowEvents = Way<"events", { follow: true }>;
/** A control call on the run with no argument beyond it (`get`: the run with its output; `why`: its explanation). */
export type PlainCall = Way<"get" | "why" | "pause" | "resume" | "retry" | "cancel" | "fork", NoArgs>;
/** Approve the wait `wait` (for the rest of the run with `scope: "run"`; with edited tool arguments when `input` is to be supplied). */
export type Approve = Way<"approve", { wait: string; scope?: "run" }, "input">;
export type Deny = Way<"deny", { wait: string }, "reason">;
export type Signal = Way<"signal", { name: string }, "payload">;
/** Release the run's open hold of kind `hold` with `choice` (choice "result" supplies the step's outcome). */
export type Release = Way<"release", { hold: HoldKind; choice: ReleaseChoice }, "result">;

export type WayOut = StartWorker | FollowEvents | PlainCall | Approve | Deny | Signal | Release;

/** The verbs a way out may name. */
export type WayOutVerb = WayOut["verb"];
