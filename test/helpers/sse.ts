/**
 * A raw SSE connection over node:http, for tests that must control the socket (pause reading,
 * cut it) and see every line the server sent: messages with their ids, comments, retry hints.
 * Parsed by hand here, not by the client under test.
 */
import { request, type IncomingMessage } from "node:http";
import { waitUntil } from "./waiting.js";

export interface SseMessage {
  id: string;
  event: { seq: number; runId: string; type: string; at: number; data: Record<string, unknown> };
}

export interface SseConnection {
  status: number;
  headers: IncomingMessage["headers"];
  messages: SseMessage[];
  comments: string[];
  retries: number[];
  /** Messages with an `event:` name (such as `end`), which are not events of the store: their name and data. */
  named: { event: string; data: string }[];
  /** The body of a refused request. */
  body: string;
  ended: Promise<void>;
  isEnded(): boolean;
  pause(): void;
  resume(): void;
  close(): void;
  waitFor(what: string, pred: (c: SseConnection) => boolean, timeoutMs?: number): Promise<void>;
  /** The id of the last message received. */
  lastId(): string | undefined;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      let done = false;
      let buffer = "";
      let id = "";
      let data: string[] = [];
      let name = "";
      const conn: SseConnection = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages: [],
        comments: [],
        retries: [],
        named: [],
        body: "",
        ended: new Promise<void>((r) => {
          res.on("end", () => {
            done = true;
            r();
          });
          res.on("close", () => {
            done = true;
            r();
          });
          res.on("error", () => {
            done = true;
            r();
          });
        }),
        isEnded: () => done,
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
        waitFor: (what, pred, timeoutMs = 30_000) => waitUntil(what, () => pred(conn), { timeoutMs, pollMs: 10 }).then(() => undefined),
        lastId: () => conn.messages[conn.messages.length - 1]?.id,
      };
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (conn.status !== 200) {
          conn.body += chunk;
          return;
        }
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === "") {
            if (data.length > 0 && name !== "") conn.named.push({ event: name, data: data.join("\n") });
            else if (data.length > 0) conn.messages.push({ id, event: JSON.parse(data.join("\n")) as SseMessage["event"] });
            data = [];
            name = "";
          } else if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith(":")) conn.comments.push(line.slice(1).trim());
          else if (line.startsWith("id: ")) id = line.slice(4);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
          else if (line.startsWith("retry: ")) conn.retries.push(Number(line.slice(7)));
        }
      });
      resolve(conn);
    });
    req.on("error", reject);
    req.end();
  });
}
