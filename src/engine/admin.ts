/**
 * Operations people (and the CLI, the server) perform on runs: the control API. One file per
 * concern under control/; every command takes an idempotency key and is safe to retry.
 */
export { requireRun, type ControlCall, type KeyOption } from "./control/common.js";
export { decide, signal, type Decision, type DecisionResult, type SignalResult } from "./control/answers.js";
export { pause, cancel, type PauseResult, type CancelResult } from "./control/stop.js";
export { resume, retry, type ResumeResult, type RetryResult } from "./control/revive.js";
export { release, findOpenHold, type ReleaseOptions } from "./control/release.js";
export { fork, type ForkResult } from "./control/fork.js";
export { startByName, type StartByNameResult } from "./control/start-by-name.js";
