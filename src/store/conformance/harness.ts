/**
 * One case's store and the helpers every concern's cases share. The suite's outer `beforeEach`
 * opens the store and its `afterEach` disposes of it and of every other store the case opened, so
 * a case that fails half-way leaves nothing open.
 */
import type { Mutation, NewRun, Owner, RunRow, Store, UnitResult } from "../types.js";
import { childRuns } from "../run-sets.js";
import type { StoreFactory } from "./factory.js";
import { DEF_A, DEF_B, LEASE, newRun, owner } from "./fixtures.js";
import { clockFor, type SuiteClock } from "./lease-clock.js";
import type { CaseFn, CaseRegistrar, Expect } from "./test-api.js";

export class Harness {
  private current: { store: Store; clock: SuiteClock } | undefined;
  /** Other instances on the case's storage (closed first), then other fresh stores (disposed). */
  private reopened: Store[] = [];
  private others: Store[] = [];

  constructor(
    readonly factory: StoreFactory,
    private readonly expect: Expect,
  ) {}

  get store(): Store {
    if (!this.current) throw new Error("the conformance suite read its store outside a case");
    return this.current.store;
  }

  get clock(): SuiteClock {
    if (!this.current) throw new Error("the conformance suite read its clock outside a case");
    return this.current.clock;
  }

  async open(): Promise<void> {
    const store = await this.factory.open();
    this.current = { store, clock: clockFor(store, this.expect, this.factory.clockToleranceMs) };
  }

  async dispose(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    try {
      for (const s of this.reopened.splice(0)) await s.close();
    } finally {
      for (const s of this.others.splice(0)) await this.factory.dispose(s);
      if (current) await this.factory.dispose(current.store);
    }
  }

  /** A second instance on the case's storage (see StoreFactory.reopen); the case needs one. */
  reopen = async (): Promise<Store> => {
    if (!this.factory.reopen) throw new Error(`${this.factory.name} factory provides no reopen()`);
    const other = await this.factory.reopen(this.store);
    this.reopened.push(other);
    return other;
  };

  /** Another fresh, empty store, disposed of with the case's. */
  another = async (): Promise<Store> => {
    const other = await this.factory.open();
    this.others.push(other);
    return other;
  };

  created = async (id: string, over: Partial<NewRun> = {}): Promise<void> => {
    await this.store.createRun(newRun(id, over), [{ type: "run.created", data: { id } }]);
  };

  /** Claims run `id` for `workerId` at `now`; returns the fence it got. */
  claimed = async (id: string, workerId: string, now: number, o: Owner = owner(workerId), leaseMs = LEASE): Promise<number> => {
    const got = await this.store.claim({ owner: o, definitions: [DEF_A, DEF_B], limit: 1, leaseMs, now, runIds: [id] });
    this.expect(got.map((c) => c.run.id)).toEqual([id]);
    return got[0]?.run.fence ?? -1;
  };

  setStatus = async (id: string, status: RunRow["status"]): Promise<void> => {
    this.expect(await this.commitOne(this.store, [{ runId: id, run: { status } }])).toMatchObject({ ok: true });
  };

  commitOne = async (store: Store, unit: Mutation[]): Promise<UnitResult> => {
    const results = await store.commit([unit]);
    this.expect(results).toHaveLength(1);
    return results[0] as UnitResult;
  };

  /** Everything the store holds about one run, to prove a refused write changed nothing. */
  snapshot = async (store: Store, runId: string) => ({
    run: await store.getRun(runId),
    journal: await store.journal(runId),
    waits: await store.waits(runId),
    holds: await store.holds({ runId }),
    events: await store.events({ runId }),
    children: await childRuns(store, runId),
  });

  /** `it` for a case that needs two instances on one storage, skipped (saying why) without reopen. */
  needsReopen(it: CaseRegistrar, name: string, fn: CaseFn): void {
    if (this.factory.reopen) it(name, fn);
    else it.skip(`${name} (skipped: the ${this.factory.name} factory provides no reopen(), so no second instance on the same storage)`, fn);
  }
}
