// What the rest of the engine and the worker use of an execution; everything else in this folder is its inside.
export { Execution } from "./execution.js";
export type { ExecutionDeps } from "./deps.js";
export type { ExecutionOutcome } from "./outcome.js";
export { resolveParent } from "./children.js";
