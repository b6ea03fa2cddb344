/**
 * Requests under open streams: starts per second through the HTTP API, one caller sending them one
 * after another (each waits for its answer, so the figure is the request's latency), against
 * `stead serve` in its own process with 0, 200 and 2,000 streams open (held by a process of their
 * own, stream-holder.ts), back to back in each round, and with none again once they are closed
 * (the reference is the mean of the two with none: the machine is shared, and its load drifts).
 * Also the server's CPU time per start (from /proc, steadier than wall time on a shared machine)
 * and its resident memory per open stream (RSS with 2,000 open, less RSS with none, over 2,000).
 *
 * The streams are of one kind per call:
 * - `store`: the whole store's (`/events/stream`). Every start writes an event each stream
 *   carries, so the server hands each start to every stream while it answers the next. Each round
 *   checks that every open stream carried every start's event.
 * - `session`: one session's (`/sessions/ID/stream`). The starts are runs of no session: each
 *   stream must learn that a new run is not its session's turn (it once cost a store read per
 *   stream per start). Each round then sends the session a turn and checks that every open stream
 *   carried its one event, and nothing of the starts.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { stead as lib } from "./lib.js";
import { announceParked, parked } from "./parked-memory.js";
import { serveCli } from "./serve-cli.js";
import { holdStreams } from "./stream-holder.js";

export const STREAM_COUNTS = [0, 200, 2000] as const;

/** Which streams are held open: the whole store's, or one session's. */
export type StreamKind = "store" | "session";

const SESSION = "bench-chat";

export interface LoadRound {
  /** Starts per second with each of STREAM_COUNTS streams open, in that order. */
  startsPerSec: number[];
  /** Starts per second with none open after the others were closed. */
  startsPerSecAfter: number;
  /** The server's CPU milliseconds per start with each of STREAM_COUNTS open (NaN without /proc). */
  cpuMsPerStart: number[];
  /**
   * Server RSS growth per open stream with the most open, in bytes (NaN without /proc). Only the
   * first round's is the streams' own: memory a round's streams took is kept by the process after
   * they close, and the next round's streams reuse it.
   */
  rssPerStream: number;
}

/** The process's resident set, from /proc (Linux); NaN elsewhere. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m?.[1] ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The process's user and system CPU time in ms, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()?.trim().split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

function post(agent: Agent, url: string, token: string, body: unknown): Promise<void> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      let reply = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (reply += c));
      res.on("end", () => ((res.statusCode ?? 0) >= 300 ? reject(new Error(`POST ${url}: ${String(res.statusCode)} ${reply}`)) : resolve()));
    });
    req.on("error", reject);
    req.end(text);
  });
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `rounds` rounds over one store and one server: in each, `starts` sequential starts with no
 * stream of `kind` open, then with 200, then with 2,000 (the holder is closed between rounds).
 */
export async function startsUnderStreams(dir: string, rounds: number, starts: number, kind: StreamKind): Promise<LoadRound[]> {
  const store = join(dir, "stead.db");
  const stead = lib.createStead({ store });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let served: Awaited<ReturnType<typeof serveCli>> | undefined;
  try {
    await stead.ready();
    const { token } = await stead.tokens.create({ name: "bench", role: "operator" });
    // Each start writes one event, its run.created.
    await announceParked(stead);
    // The session the session streams follow: one turn, queued (no worker runs it).
    if (kind === "session") await stead.session(parked, SESSION).send(undefined);
    served = await serveCli(store);
    const pid = served.child.pid ?? 0;
    const url = `${served.url}/api/v1/runs`;
    const start = () => post(agent, url, token, { definition: parked.name, input: null });
    const timed = async (): Promise<{ perSec: number; cpuMs: number }> => {
      const c0 = cpuMs(pid);
      const t0 = performance.now();
      for (let i = 0; i < starts; i++) await start();
      const perSec = (starts * 1000) / (performance.now() - t0);
      return { perSec, cpuMs: (cpuMs(pid) - c0) / starts };
    };
    // A fresh server runs its first requests while V8 still compiles its hot paths: not timed.
    for (let i = 0; i < 4 * starts; i++) await start();
    const out: LoadRound[] = [];
    for (let r = 0; r < rounds; r++) {
      const holder = holdStreams(served.url, kind === "session" ? `/api/v1/sessions/${SESSION}/stream` : "/api/v1/events/stream");
      try {
        const rates: number[] = [];
        const cpu: number[] = [];
        let rssNone = NaN;
        let rssMost = NaN;
        let open = 0;
        for (const n of STREAM_COUNTS) {
          if (n > open) open = await holder.open(n - open);
          await settle(1_000);
          if (n === 0) rssNone = rssBytes(pid);
          if (n === STREAM_COUNTS[STREAM_COUNTS.length - 1]) rssMost = rssBytes(pid);
          await holder.reset();
          const t = await timed();
          rates.push(t.perSec);
          cpu.push(t.cpuMs);
          if (n > 0 && kind === "session") {
            // None of the starts is a turn of the session; a new turn is, and every stream carries its run.created.
            await post(agent, `${served.url}/api/v1/sessions/${SESSION}/messages`, token, { text: "a turn" });
            let got = await holder.count();
            for (let tries = 0; got.min < 1 && tries < 600; tries++) {
              await settle(100);
              got = await holder.count();
            }
            if (got.min !== 1 || got.max !== 1) throw new Error(`with ${n} session streams open, the streams carried ${got.min} to ${got.max} events of ${starts} starts outside the session and one new turn, not 1 each`);
          } else if (n > 0) {
            // Every open stream carried every start's run.created (the last ones may still be on their way).
            let got = await holder.count();
            for (let tries = 0; got.min < starts && tries < 600; tries++) {
              await settle(100);
              got = await holder.count();
            }
            if (got.min < starts) throw new Error(`with ${n} streams open, one stream carried ${got.min} of the ${starts} starts' events`);
          }
        }
        await holder.close();
        await settle(1_000);
        const after = await timed();
        out.push({ startsPerSec: rates, startsPerSecAfter: after.perSec, cpuMsPerStart: cpu, rssPerStream: (rssMost - rssNone) / (STREAM_COUNTS[STREAM_COUNTS.length - 1] ?? 1) });
      } finally {
        await holder.close();
      }
    }
    return out;
  } finally {
    agent.destroy();
    served?.child.kill("SIGTERM");
    await stead.close();
  }
}
