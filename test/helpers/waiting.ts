/** A promise with its resolver exposed: a gate a test opens when it chooses. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Polls `check` until it returns a value other than undefined/false, and returns it; throws after
 * `timeoutMs` naming `what`. A bounded wait for a condition, never an assertion about speed.
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; pollMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, options.pollMs ?? 10));
  }
}

/** Resolves with the thrown value of `fn` (fails if it does not throw), for asserting error fields. */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected the call to throw, but it returned");
}
