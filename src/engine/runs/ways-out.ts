/**
 * A way out of where a run is, as data: the control call that takes it (its verb, the run, the
 * arguments the engine knows) and the arguments only a person can give (`supply`). The engine
 * never writes a command line: each skin renders a way out in its own terms (the CLI as a
 * `stead …` command, the HTTP API as a route, MCP as a tool call). The shapes are the HTTP API's
 * (a run's `why`), declared once in client/api-types.ts.
 */
import type { WayOut } from "../../client/api-types.js";

export type { Approve, Deny, FollowEvents, PlainCall, Release, Signal, StartWorker, WayOut } from "../../client/api-types.js";

/** The verbs a way out may name. */
export type WayOutVerb = WayOut["verb"];
