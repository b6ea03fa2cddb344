/**
 * Live event streams: N subscribers on one run's SSE stream (`stead serve` as a child process over
 * an SQLite store) while a worker in this process executes the run. Every subscriber must receive
 * every event of the run, in order, once; the figures are the time from the run's first event to
 * the last subscriber's last event with 1,000 subscribers against the same with 1 (same run, same
 * machine, back to back), and the server's resident memory growth per connected subscriber. Then
 * starts per second through the API with 0, 200 and 2,000 whole-store streams open, then the same
 * with one session's streams open (streams-load.ts), and the server's memory per open stream.
 */
import { request } from "node:http";
import { join } from "node:path";
import { stead as lib } from "./lib.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { serveCli, type ServedCli } from "./serve-cli.js";
import { rssBytes, startsUnderStreams, STREAM_COUNTS, type StreamKind } from "./streams-load.js";
import { inScratch } from "./temp-dir.js";

const MANY = 1000;
const STEPS = 100;
const ROUNDS = 3;
/** Sequential starts timed with each number of streams open, per round. */
const STARTS = 200;

const chatty = lib.workflow("bench-streams", async (ctx, input: { steps: number }) => {
  for (let i = 0; i < input.steps; i++) await ctx.step(`s-${i}`, () => ({ i }));
  return { steps: input.steps };
});

/** One subscriber: the run's events as the stream delivered them, and when its last one came. */
interface Subscription {
  readonly seqs: number[];
  lastAt: number;
  readonly open: Promise<void>;
  readonly done: Promise<void>;
  close(): void;
}

function subscribe(base: URL, runId: string): Subscription {
  const seqs: number[] = [];
  let buffered = "";
  const sub: { seqs: number[]; lastAt: number } = { seqs, lastAt: 0 };
  let opened!: () => void;
  let finished!: () => void;
  let failed!: (e: Error) => void;
  const open = new Promise<void>((r) => (opened = r));
  const done = new Promise<void>((r, f) => {
    finished = r;
    failed = f;
  });
  const req = request(new URL(`/api/v1/runs/${runId}/stream`, base), { headers: { accept: "text/event-stream" } }, (res) => {
    if (res.statusCode !== 200) return failed(new Error(`stream answered ${String(res.statusCode)}`));
    opened();
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const message = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const lines = message.split("\n");
        const data = lines.find((l) => l.startsWith("data: "));
        // A named message (the `end` after the run's final event) is no event of the store.
        if (!data || lines.some((l) => l.startsWith("event: "))) continue;
        const event = JSON.parse(data.slice(6)) as { seq: number; type: string };
        seqs.push(event.seq);
        sub.lastAt = performance.now();
        if (event.type === "run.completed") finished();
      }
    });
    res.on("error", (e) => failed(e));
  });
  req.on("error", (e) => failed(e));
  req.end();
  return Object.assign(sub, { open, done, close: () => req.destroy() });
}

interface RoundResult {
  readonly deliveryMs: number;
  readonly rssPerSubscriber: number;
}

/** One run of STEPS steps executed while `n` subscribers follow its stream; checks every delivery. */
async function round(dir: string, served: ServedCli, n: number, label: string): Promise<RoundResult> {
  const stead = lib.createStead({ store: join(dir, "stead.db") });
  try {
    const { id } = await stead.runs.start(chatty, { steps: STEPS }, { id: `streams-${label}` });
    const pid = served.child.pid ?? 0;
    const rssBefore = rssBytes(pid);
    const subs = Array.from({ length: n }, () => subscribe(new URL(served.url), id));
    await Promise.all(subs.map((s) => s.open));
    await new Promise((r) => setTimeout(r, 200));
    const rssConnected = rssBytes(pid);
    const worker = stead.worker({ definitions: [chatty], concurrency: 1 });
    const t0 = performance.now();
    worker.start();
    await Promise.all(subs.map((s) => s.done));
    const deliveredAt = Math.max(...subs.map((s) => s.lastAt));
    await worker.stop();
    const expected = (await stead.runs.events({ runId: id })).map((e) => e.seq);
    for (const [i, s] of subs.entries()) {
      if (s.seqs.join(",") !== expected.join(",")) throw new Error(`subscriber ${i} of ${n} saw ${s.seqs.length} events, not the run's ${expected.length} in order`);
    }
    for (const s of subs) s.close();
    return { deliveryMs: deliveredAt - t0, rssPerSubscriber: (rssConnected - rssBefore) / n };
  } finally {
    await stead.close();
  }
}

export async function streamsSuite(): Promise<void> {
  console.log(`Live event streams (SQLite store; stead serve in its own process; one run of ${STEPS} steps; ${MANY} subscribers against 1, ${ROUNDS} pairs)\n`);
  await inScratch("streams", async (dir) => {
    await lib.createStead({ store: join(dir, "stead.db") }).close();
    const served = await serveCli(join(dir, "stead.db"));
    try {
      const ratios: number[] = [];
      const perSub: number[] = [];
      const single: number[] = [];
      const many: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const one = await round(dir, served, 1, `one-${r}`);
        const lots = await round(dir, served, MANY, `many-${r}`);
        single.push(one.deliveryMs);
        many.push(lots.deliveryMs);
        ratios.push(lots.deliveryMs / one.deliveryMs);
        perSub.push(lots.rssPerSubscriber);
      }
      console.log(`run start to the last subscriber's run.completed: 1 subscriber ${single.map((x) => fmt(x)).join(" / ")} ms; ${MANY} subscribers ${many.map((x) => fmt(x)).join(" / ")} ms\n`);
      const rows: Row[] = [
        { name: `${MANY} subscribers on one run: every one got every event, in order, once`, value: "yes", target: "yes", pass: true },
        { name: `  delivery time, ${MANY} subscribers / 1`, value: `${fmt(median(ratios), 2)}x`, target: "", pass: null },
        { name: "  server memory growth per connected subscriber", value: Number.isNaN(median(perSub)) ? "n/a (no /proc)" : `${fmt(median(perSub) / 1024, 1)} KiB`, target: "", pass: null },
      ];
      printTable(rows);
    } finally {
      served.child.kill("SIGTERM");
      await new Promise((r) => served.child.once("exit", r));
    }
  });
  for (const kind of ["store", "session"] as const) await startsSuite(kind);
}

/** Starts per second through HTTP with 0, 200 and 2,000 streams of `kind` open, against none. */
async function startsSuite(kind: StreamKind): Promise<void> {
  const what = kind === "store" ? "/events/stream" : "/sessions/ID/stream (one session's; the starts are of no session)";
  const streams = kind === "store" ? "streams" : "session streams";
  console.log(`\nStarts under open ${streams} (SQLite store; stead serve in its own process; ${STARTS} sequential starts through HTTP with ${STREAM_COUNTS.join(", ")} ${what} connections open, then none again, ${ROUNDS} rounds)\n`);
  await inScratch(`streams-load-${kind}`, async (dir) => {
    const rounds = await startsUnderStreams(dir, ROUNDS, STARTS, kind);
    const rate = (k: number) => rounds.map((r) => r.startsPerSec[k] ?? NaN);
    // Against the mean of the rates with none open before and after: the machine's load drifts.
    const ratio = (k: number) => rounds.map((r) => (r.startsPerSec[k] ?? NaN) / (((r.startsPerSec[0] ?? NaN) + r.startsPerSecAfter) / 2));
    const cpu = (k: number) => rounds.map((r) => r.cpuMsPerStart[k] ?? NaN);
    const most = STREAM_COUNTS.length - 1;
    console.log(`starts/s: ${STREAM_COUNTS.map((n, k) => `${n} ${streams} ${rate(k).map((x) => fmt(x)).join(" / ")}`).join("; ")}; none again ${rounds.map((r) => fmt(r.startsPerSecAfter)).join(" / ")}`);
    console.log(`server CPU ms per start: ${STREAM_COUNTS.map((n, k) => `${n} ${streams} ${cpu(k).map((x) => fmt(x, 2)).join(" / ")}`).join("; ")}\n`);
    // The first round's: later rounds' streams reuse memory the first round's left to the process.
    const perStream = rounds[0]?.rssPerStream ?? NaN;
    const rows: Row[] = [
      ...STREAM_COUNTS.map((n, k): Row => {
        const note = noisy(rate(k));
        return { name: `starts/s through HTTP, one caller, ${fmt(n)} ${streams} open`, value: fmt(median(rate(k))), target: "", pass: null, ...(note ? { note } : {}) };
      }),
      { name: `  ${fmt(STREAM_COUNTS[1] ?? 0)} ${streams} / none`, value: `${fmt(median(ratio(1)), 2)}x`, target: "", pass: null },
      { name: `  ${fmt(STREAM_COUNTS[most] ?? 0)} ${streams} / none`, value: `${fmt(median(ratio(most)), 2)}x`, target: ">= 0.50x", pass: median(ratio(most)) >= 0.5 },
      { name: `  server CPU per start, ${fmt(STREAM_COUNTS[most] ?? 0)} ${streams} / none`, value: `${fmt(median(rounds.map((r) => (r.cpuMsPerStart[most] ?? NaN) / (r.cpuMsPerStart[0] ?? NaN))), 2)}x`, target: "", pass: null },
      { name: `  server memory per open ${kind === "store" ? "stream" : "session stream"} (RSS, first round)`, value: Number.isNaN(perStream) ? "n/a (no /proc)" : `${fmt(perStream / 1024, 1)} KiB`, target: "", pass: null },
    ];
    printTable(rows);
  });
}
