/**
 * Metrics on a port of their own (`stead worker --metrics`): plain node:http, `GET /metrics` and
 * nothing else. No tokens: bind it to loopback (the default) unless the network it is on may read
 * the worker's counts. On loopback, Host names other than the loopback ones are refused, so a page
 * in a browser cannot read it through DNS rebinding; on another address every Host is served (a
 * wildcard bind is reached by any of the machine's names).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SteadError } from "../errors.js";
import { isLoopback } from "./address.js";
import type { Metrics } from "./metrics.js";

export interface MetricsListening {
  readonly url: string;
  close(): Promise<void>;
}

export async function serveMetrics(metrics: Metrics, options: { host?: string; port: number; logError?: (line: string) => void }): Promise<MetricsListening> {
  const host = options.host ?? "127.0.0.1";
  const bare = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const loopback = isLoopback(host);
  let names = new Set<string>();
  const server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
      res.end(body);
    };
    if (loopback && !names.has((req.headers.host ?? "").toLowerCase())) return send(421, "text/plain; charset=utf-8", "this server does not serve that host\n");
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") return send(404, "text/plain; charset=utf-8", "only GET /metrics is served here\n");
    metrics.text().then(
      (text) => send(200, metrics.contentType, text),
      (e: unknown) => {
        options.logError?.(`GET /metrics: ${e instanceof Error ? e.message : String(e)}`);
        send(500, "text/plain; charset=utf-8", "metrics could not be read\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new SteadError("STEAD_BAD_OPTION", `port ${options.port} on ${host} is in use`, { fix: "pass another --metrics port, or stop what holds it" })
          : e.code === "EADDRNOTAVAIL" || e.code === "ENOTFOUND"
            ? new SteadError("STEAD_BAD_OPTION", `cannot listen on ${host}: ${e.code}`, { fix: "pass an address of this machine to --metrics" })
            : e,
      ),
    );
    server.listen(options.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  names = new Set([bare, "localhost", "127.0.0.1", "[::1]"].map((n) => `${n.toLowerCase()}:${port}`));
  return {
    url: `http://${bare}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
