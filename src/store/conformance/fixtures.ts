/** Builders of the rows and requests the cases write: plain data, no store. */
import type { Mutation, NewRun, Owner, StepWrite } from "../types.js";

export const DEF_A = "def-a";
export const DEF_B = "def-b";
/**
 * A lease no case waits out: it holds for the whole case on either clock, even on a loaded
 * machine where a case's real time (the store clock) runs to seconds.
 */
export const LEASE = 60_000;

export function owner(workerId: string, host = "host-1", pid = 4242): Owner {
  return { workerId, host, pid, start: `proc:${pid}00` };
}

export function newRun(id: string, over: Partial<NewRun> = {}): NewRun {
  return { id, definition: DEF_A, module: null, fingerprint: "fp-1", input: JSON.stringify({ id }), createdAt: Date.now(), ...over };
}

export function step(seq: number, stepId: string, over: Partial<StepWrite> = {}): StepWrite {
  return { seq, stepId, kind: "step", status: "completed", attempt: 1, output: JSON.stringify(stepId), startedAt: 1_000 + seq, completedAt: 2_000 + seq, ...over };
}

export function fenced(runId: string, fence: number, workerId: string, m: Omit<Mutation, "runId" | "expect"> = {}): Mutation {
  return { runId, expect: { lease: { fence, owner: workerId } }, ...m };
}

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await check();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`conformance: waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
