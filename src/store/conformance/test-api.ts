/**
 * The test functions the conformance suite is given, as the least it needs of them: vitest's
 * `describe`, `it`, `expect`, `beforeEach` and `afterEach` fit as they are (the store tests pass
 * them). The suite imports no test runner, so a store's own project runs it under whichever it uses.
 */

export interface Matchers<R> {
  toBe(expected: unknown): R;
  /** Deep equality; `expect.any(...)` stands for any value of a type. */
  toEqual(expected: unknown): R;
  toMatchObject(expected: object): R;
  toHaveLength(length: number): R;
  toBeUndefined(): R;
  toBeDefined(): R;
  toBeNull(): R;
  toBeGreaterThan(n: number): R;
  toBeGreaterThanOrEqual(n: number): R;
  toBeLessThan(n: number): R;
  toBeLessThanOrEqual(n: number): R;
  toContain(item: unknown): R;
  toThrow(expected?: string | RegExp): R;
}

export interface Assertion extends Matchers<void> {
  not: Matchers<void>;
  rejects: Matchers<Promise<void>>;
  resolves: Matchers<Promise<void>>;
}

export interface Expect {
  /** `message` names the value in a failure. */
  (actual: unknown, message?: string): Assertion;
  /** An asymmetric matcher: any value made by `type` (`Number`, `String`, ...). */
  any(type: unknown): unknown;
}

export type CaseFn = () => Promise<void>;

export interface CaseRegistrar {
  (name: string, fn: CaseFn, timeoutMs?: number): void;
  /** A case the factory cannot run; its name says why. */
  skip: (name: string, fn: CaseFn) => void;
}

/** Properties, not methods: the suite calls them detached (`const { it } = api`), as test files do. */
export interface ConformanceTestApi {
  describe: (name: string, body: () => void) => void;
  it: CaseRegistrar;
  expect: Expect;
  beforeEach: (fn: () => Promise<void> | void) => void;
  afterEach: (fn: () => Promise<void> | void) => void;
}
