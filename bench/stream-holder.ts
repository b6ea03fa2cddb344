/**
 * Open stream connections (`/events/stream` unless told another path, such as a session's) held in
 * a process of their own, so that reading them does not take the event loop of the process whose
 * requests are timed. `holdStreams(url, path)` spawns this file;
 * run as that child, it opens streams when told (`open N` on stdin, answered `opened TOTAL` once
 * each has its first bytes), counts the events each has carried (`count`, answered `count MIN MAX`; `reset` counts from zero again),
 * and exits when its stdin closes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request, type ClientRequest } from "node:http";
import { createInterface } from "node:readline";

export interface StreamHolder {
  /** Opens `n` more streams; resolves with how many are open. */
  open(n: number): Promise<number>;
  /** The fewest and most events one open stream has carried since the last reset. */
  count(): Promise<{ min: number; max: number }>;
  /** Counts every open stream's events from zero again. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export function holdStreams(url: string, path = "/api/v1/events/stream"): StreamHolder {
  const child: ChildProcess = spawn(process.execPath, [...process.execArgv, import.meta.filename, url, path], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const ask = (command: string) =>
    new Promise<string>((resolve, reject) => {
      waiting.push(resolve);
      child.stdin?.write(`${command}\n`, (e) => e && reject(e));
    });
  return {
    async open(n) {
      const answer = await ask(`open ${n}`);
      if (!answer.startsWith("opened ")) throw new Error(`the stream holder answered ${JSON.stringify(answer)}`);
      return Number(answer.slice(7));
    },
    async count() {
      const [, min, max] = (await ask("count")).split(" ");
      return { min: Number(min), max: Number(max) };
    },
    async reset() {
      if ((await ask("reset")) !== "reset") throw new Error("the stream holder did not reset its counts");
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin?.end();
      await exited;
    },
  };
}

/** One held stream: the events it carried (its `data:` lines), counted across chunk boundaries. */
interface Held {
  req: ClientRequest;
  events: number;
  tail: string;
}

function openOne(url: string, held: Held[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const h: Held = { req: undefined as unknown as ClientRequest, events: 0, tail: "" };
    h.req = request(url, { agent: false, headers: { accept: "text/event-stream" } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`a stream was answered ${String(res.statusCode)}`));
      res.setEncoding("utf8");
      let first = true;
      res.on("data", (chunk: string) => {
        const text = h.tail + chunk;
        for (let i = text.indexOf("\ndata: "); i >= 0; i = text.indexOf("\ndata: ", i + 1)) h.events++;
        h.tail = text.slice(-6);
        if (first) {
          first = false;
          held.push(h);
          resolve();
        }
      });
      res.on("error", () => undefined);
    });
    h.req.on("error", reject);
    h.req.end();
  });
}

async function main(base: string, path: string): Promise<void> {
  const url = `${base}${path}`;
  const held: Held[] = [];
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [verb, arg] = line.split(" ");
    if (verb === "open") {
      const n = Number(arg);
      // In batches: thousands of connects at once overflow the server's accept backlog.
      for (let done = 0; done < n; done += 100) await Promise.all(Array.from({ length: Math.min(100, n - done) }, () => openOne(url, held)));
      process.stdout.write(`opened ${held.length}\n`);
    } else if (verb === "count") {
      const counts = held.map((h) => h.events);
      process.stdout.write(`count ${counts.length ? Math.min(...counts) : 0} ${counts.length ? Math.max(...counts) : 0}\n`);
    } else if (verb === "reset") {
      for (const h of held) h.events = 0;
      process.stdout.write("reset\n");
    }
  }
  for (const h of held) h.req.destroy();
}

if (process.argv[1] === import.meta.filename && process.argv[2] && process.argv[3]) {
  main(process.argv[2], process.argv[3]).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
