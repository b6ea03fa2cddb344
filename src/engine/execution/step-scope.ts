import { AsyncLocalStorage } from "node:async_hooks";
import type { StepInfo } from "../context-types.js";

/** The step whose function is running, for `ctx.idempotencyKey`. Shared by every execution in the process: check its runId. */
export const stepScope = new AsyncLocalStorage<StepInfo>();
