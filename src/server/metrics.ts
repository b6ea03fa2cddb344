/**
 * Prometheus metrics (text format, prom-client): what a scrape of `/metrics` (the server) or of
 * `stead worker --metrics` reads. Two sources:
 *
 * - the store, read at scrape time through the control API (`stead.admin.tally()`: grouped counts of
 *   runs by status, open waits and holds by kind; never a row per run, never a journal);
 * - workers in this process, counted from their events as they happen: claims, takeovers (a claim
 *   of a run whose lease had expired while `running`), lease losses, and each step's commit
 *   latency (from the commit's call to its durable end, the time the step waited for it).
 *
 * Every instance has a registry of its own: two servers in one process never share counts.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Stead } from "../stead/stead.js";
import type { Worker } from "../worker/worker.js";
import { RUN_STATUSES } from "../store/types.js";

/** Seconds; a step commit is a few ms on a local SQLite file, tens on a remote Postgres. */
const COMMIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const WAIT_KINDS = ["approval", "signal", "timer", "quota", "child"] as const;
const HOLD_KINDS = ["process_failed", "ambiguous_effect", "definition_changed", "nondeterminism", "recovery_gap", "storage"] as const;

/** Every label value to report: the known ones (0 when absent, so a series never vanishes) and any other the store holds. */
const known = (all: readonly string[], counted: object): string[] => [...new Set([...all, ...Object.keys(counted)])];

export interface MetricsOptions {
  /** The store's counts come from this instance at each scrape; without it, only workers' metrics. */
  readonly stead?: Stead;
}

export class Metrics {
  readonly registry = new Registry();
  private streamSubscribers: () => number = () => 0;
  private readonly claims: Counter<"worker">;
  private readonly takeovers: Counter<"worker">;
  private readonly leaseLosses: Counter<"worker">;
  private readonly commitSeconds: Histogram<"worker">;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    const stead = options.stead;
    if (stead) {
      // One tally per scrape, shared by the three gauges (each collect() runs in the same scrape).
      let scrape: Promise<Awaited<ReturnType<Stead["admin"]["tally"]>>> | undefined;
      const tally = () => (scrape ??= stead.admin.tally().finally(() => setImmediate(() => (scrape = undefined))));
      new Gauge({
        name: "stead_runs",
        help: "Runs in the store, by status.",
        labelNames: ["status"],
        registers,
        async collect() {
          const t = await tally();
          for (const s of known(RUN_STATUSES, t.runs)) this.set({ status: s }, (t.runs as Record<string, number>)[s] ?? 0);
        },
      });
      new Gauge({
        name: "stead_waits_open",
        help: "Open waits in the store, by kind.",
        labelNames: ["kind"],
        registers,
        async collect() {
          const t = await tally();
          for (const k of known(WAIT_KINDS, t.openWaits)) this.set({ kind: k }, (t.openWaits as Record<string, number>)[k] ?? 0);
        },
      });
      new Gauge({
        name: "stead_holds_open",
        help: "Open holds in the store, by kind.",
        labelNames: ["kind"],
        registers,
        async collect() {
          const t = await tally();
          for (const k of known(HOLD_KINDS, t.openHolds)) this.set({ kind: k }, (t.openHolds as Record<string, number>)[k] ?? 0);
        },
      });
    }
    const subscribers = () => this.streamSubscribers();
    new Gauge({
      name: "stead_event_stream_subscribers",
      help: "Clients following an event stream of this server.",
      registers,
      collect() {
        this.set(subscribers());
      },
    });
    this.claims = new Counter({ name: "stead_claims_total", help: "Runs claimed by workers of this process.", labelNames: ["worker"], registers });
    this.takeovers = new Counter({
      name: "stead_takeovers_total",
      help: "Claims of a run another execution had left running with an expired lease (a crash, a freeze, a lost connection).",
      labelNames: ["worker"],
      registers,
    });
    this.leaseLosses = new Counter({ name: "stead_lease_losses_total", help: "Executions of this process's workers ended because their lease was lost.", labelNames: ["worker"], registers });
    this.commitSeconds = new Histogram({
      name: "stead_step_commit_seconds",
      help: "How long a step waited for its write to be durable (group commit included).",
      labelNames: ["worker"],
      buckets: COMMIT_BUCKETS,
      registers,
    });
  }

  /** The count of event-stream subscribers, asked at each scrape (default: 0). */
  setStreamSubscribers(count: () => number): void {
    this.streamSubscribers = count;
  }

  /**
   * Counts what `worker` does from now on; returns the function that stops counting. Labelled by
   * the worker's id at the time of each event (it changes when a worker re-registers its presence).
   */
  observeWorker(worker: Worker): () => void {
    const label = () => ({ worker: worker.owner.workerId });
    const claimed = (_id: string, previousStatus: string) => {
      this.claims.inc(label());
      if (previousStatus === "running") this.takeovers.inc(label());
    };
    const outcome = (_id: string, o: { kind: string }) => {
      if (o.kind === "lease-lost") this.leaseLosses.inc(label());
    };
    const committed = (_id: string, ms: number) => this.commitSeconds.observe(label(), ms / 1000);
    worker.on("claimed", claimed);
    worker.on("outcome", outcome);
    worker.on("committed", committed);
    return () => {
      worker.off("claimed", claimed);
      worker.off("outcome", outcome);
      worker.off("committed", committed);
    };
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text of every metric, read now. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
