/**
 * Operations people (and the CLI, the server) perform on runs: the control API. One file per
 * concern in this folder; every command takes an idempotency key and is safe to retry.
 */
export { requireRun, type ControlCall, type KeyOption } from "./common.js";
export { decide, signal, type Decision, type DecisionResult, type SignalResult } from "./answers.js";
export { pause, cancel, type PauseResult, type CancelResult } from "./stop.js";
export { resume, retry, type ResumeResult, type RetryResult } from "./revive.js";
export { release, findOpenHold, type ReleaseOptions } from "./release.js";
export { fork, type ForkResult } from "./fork.js";
export { startByName, type StartByNameResult } from "./start-by-name.js";
