import type { HoldKind } from "../../store/types.js";

/** How one execution of a claimed run ended, as the worker reports it (`outcome` event). */
export type ExecutionOutcome =
  | { kind: "completed" }
  | { kind: "failed"; error: string }
  | { kind: "waiting"; wait: string }
  | { kind: "held"; hold: HoldKind; reason: string }
  | { kind: "paused" }
  | { kind: "released" }
  | { kind: "requeued" }
  | { kind: "lease-lost" }
  /** Ended because the store cannot write (full): the worker hands the run back (see StorageGuard). */
  | { kind: "storage"; error: string }
  | { kind: "aborted"; error?: string };
