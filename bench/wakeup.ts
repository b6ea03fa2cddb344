/**
 * Approval → next step: ms from the HTTP response to an approval to the start of the run's next
 * step on a worker already running, which polls every `pollMs`. The server and the worker share
 * one process and one Stead, as in `stead serve --worker`; on Postgres the wake-up travels through
 * the database (NOTIFY in the approval's transaction, LISTEN on the worker's presence connection),
 * on SQLite through the store object (onWake). Without a wake-up the figure would be about half
 * the poll interval on average; with one it is a small fraction of it. A figure at or below 0
 * means the step began before the response reached the client.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { stead as lib } from "./lib.js";

const dist = (file: string) => pathToFileURL(resolve(import.meta.dirname, "../dist", file)).href;
const { listen } = (await import(dist("server/listen.js"))) as typeof import("../src/server/listen.js");
const { tokensOf } = (await import(dist("server/auth.js"))) as typeof import("../src/server/auth.js");

export interface WakeupResult {
  /** From the approval's response to the next step's start, one figure per repeat, ms. */
  latencies: number[];
  /** The same from the approval's request being sent. */
  fromRequest: number[];
  pollMs: number;
}

/** `repeats` approvals, each of a run parked at its approval, on the store at `location`. */
export async function approvalToNextStep(location: string, repeats: number, pollMs: number): Promise<WakeupResult> {
  const stead = lib.createStead({ store: location });
  await stead.ready();
  const { token } = await stead.tokens.create({ name: "bench", role: "operator" });
  const server = await listen({ stead, authenticate: tokensOf(stead), port: 0 });
  const nextStepAt = new Map<string, number>();
  const flow = lib.workflow("bench-wakeup", async (ctx, input: { id: string }) => {
    await ctx.step("prepare", () => 1);
    await ctx.approval("go", {});
    return ctx.step("next", () => {
      nextStepAt.set(input.id, performance.now());
      return 2;
    });
  });
  const worker = stead.worker({ definitions: [flow], pollMs, graceMs: 1_000 });
  worker.on("error", (e) => console.error(`bench worker: ${e instanceof Error ? e.message : String(e)}`));
  const parked = new Set<string>();
  worker.on("outcome", (id, o) => o.kind === "waiting" && parked.add(id));
  worker.start();
  const until = async (what: string, check: () => boolean, ms = 60_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`bench wakeup: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const latencies: number[] = [];
  const fromRequest: number[] = [];
  try {
    for (let i = 0; i < repeats; i++) {
      const key = `r${i}`;
      const { id } = await stead.runs.start(flow, { id: key });
      await until("the run to park", () => parked.has(id));
      // At a point of the poll's cycle that varies from one repeat to the next.
      await new Promise((r) => setTimeout(r, 50 + ((i * 397) % Math.max(1, pollMs / 2))));
      const sent = performance.now();
      const res = await fetch(`${server.url}/api/v1/runs/${id}/waits/go/approve`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
      const answered = performance.now();
      if (res.status !== 200) throw new Error(`bench wakeup: the approval answered ${res.status}: ${await res.text()}`);
      await until("the next step", () => nextStepAt.has(key), pollMs * 3 + 10_000);
      latencies.push((nextStepAt.get(key) ?? NaN) - answered);
      fromRequest.push((nextStepAt.get(key) ?? NaN) - sent);
    }
  } finally {
    await worker.stop();
    await server.close(1_000);
    await stead.close();
  }
  return { latencies, fromRequest, pollMs };
}
