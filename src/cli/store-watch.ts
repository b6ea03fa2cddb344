/**
 * A process that serves a store without writing to it unasked (`stead serve` with no worker) learns
 * that its store is gone only when a request's write or read finds out, or never. So it asks the
 * store every `intervalMs` whether it is still the one it opened (`stead.admin.readiness()`, which for
 * SQLite checks the file's identity) and reports the loss as a worker's fatal error is reported.
 * Any other failure of the check (a database briefly unreachable) is not a loss: it is asked again.
 */
import type { Stead } from "../stead/stead.js";

export const STORE_WATCH_MS = 1_000;

export interface StoreWatch {
  /** Resolves with the STEAD_STORE_LOST error once the store is found gone; never rejects. */
  readonly lost: Promise<unknown>;
  stop(): void;
}

export function watchStore(stead: Stead, intervalMs = STORE_WATCH_MS): StoreWatch {
  let asking = false;
  let timer: NodeJS.Timeout | undefined;
  const lost = new Promise<unknown>((resolve) => {
    timer = setInterval(() => {
      // One question at a time: a check that hangs (a database gone quiet) is not asked over and over.
      if (asking) return;
      asking = true;
      stead.admin.readiness().then(
        () => (asking = false),
        (e: unknown) => {
          asking = false;
          if ((e as { code?: unknown } | null)?.code !== "STEAD_STORE_LOST") return;
          clearInterval(timer);
          resolve(e);
        },
      );
    }, intervalMs);
    timer.unref();
  });
  return { lost, stop: () => clearInterval(timer) };
}
