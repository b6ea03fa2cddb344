/**
 * The API on a socket: HTTP, or HTTPS with a certificate and key. `close()` is the graceful
 * shutdown: event streams end with a `retry:` hint, no new connections, in-flight requests finish
 * (up to `graceMs`, then the rest are cut).
 *
 * Invariant: a non-loopback address is only served with tokens (the caller checks there is at
 * least one before listening), and reads need a token there too, as they do behind a proxy
 * (`trustProxy`), whose requests all come from its own address.
 */
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";
import type { Server } from "node:http";
import { SteadError } from "../errors.js";
import { DEFAULT_PORT, isLoopback } from "./address.js";
import { createApi, type ApiOptions } from "./app.js";
import { requestOrigin } from "./forwarded.js";
import { StreamHub, type StreamOptions } from "./streams/hub.js";

export interface ListenOptions extends Omit<ApiOptions, "hosts" | "anonymousReads" | "remoteAddress" | "secureRequest" | "streams"> {
  /** The live event streams' poll, heartbeat and per-subscriber bound (streams/hub.ts). */
  readonly streams?: StreamOptions;
  /** Address to bind. Default 127.0.0.1. */
  readonly host?: string;
  /** Port; 0 picks a free one. Default 7420. */
  readonly port?: number;
  /** More Host header names to serve (a DNS name the server is reached by). */
  readonly extraHosts?: readonly string[];
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /**
   * Behind a TLS-terminating proxy: honour its `X-Forwarded-For` (the client address the bad-token
   * slowdown keys on) and `X-Forwarded-Proto` (https: Secure cookies), and serve the `extraHosts`
   * names without a port too (as a proxy on 443 passes them). Without it those headers are ignored.
   */
  readonly trustProxy?: boolean;
}

export interface Listening {
  /** The base URL (`http://127.0.0.1:7420`). */
  readonly url: string;
  readonly port: number;
  readonly loopback: boolean;
  /** Live event stream subscribers now (a gauge reads it). */
  liveSubscribers(): number;
  /** Ends every event stream with a `retry:` hint, then closes as below. */
  close(graceMs?: number): Promise<void>;
}

export { DEFAULT_PORT, isLoopback } from "./address.js";

export async function listen(options: ListenOptions): Promise<Listening> {
  const host = options.host ?? "127.0.0.1";
  const loopback = isLoopback(host);
  let port = options.port ?? DEFAULT_PORT;
  // The app is made once the port is known (the Host names it serves carry the port).
  const made: { app?: Hono } = {};
  const fetch = (req: Request, env: unknown): Response | Promise<Response> => (made.app ? made.app.fetch(req, env) : new Response(null, { status: 503 }));
  const server = (
    options.tls
      ? createAdaptorServer({ fetch, createServer: createHttpsServer, serverOptions: { cert: options.tls.cert, key: options.tls.key } })
      : createAdaptorServer({ fetch })
  ) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new SteadError("STEAD_BAD_OPTION", `port ${port} on ${host} is in use`, { fix: "pass another --listen port, or stop what holds it" })
          : e.code === "EADDRNOTAVAIL" || e.code === "ENOTFOUND"
            ? new SteadError("STEAD_BAD_OPTION", `cannot listen on ${host}: ${e.code}`, { fix: "pass an address of this machine to --listen" })
            : e,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const bare = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const names = new Set([bare, ...(loopback ? ["localhost", "127.0.0.1", "[::1]"] : []), ...(options.extraHosts ?? [])]);
  const from = requestOrigin({ tls: options.tls !== undefined, trustProxy: options.trustProxy === true });
  const { trustProxy: _trustProxy, streams: streamOptions, ...api } = options;
  const hub = new StreamHub(options.stead, { ...streamOptions, ...(options.logError ? { logError: options.logError } : {}) });
  const scheme = options.tls ? "https" : "http";
  const listened = [...names].map((n) => `${n.toLowerCase()}:${port}`);
  // A TLS-terminating proxy passes its public names without a port; a browser reached them over https.
  const proxied = options.trustProxy ? (options.extraHosts ?? []).map((n) => n.toLowerCase()) : [];
  made.app = createApi({
    ...api,
    streams: hub,
    // Behind a proxy on this machine every request comes from loopback: it is no sign of a local caller.
    anonymousReads: loopback && options.trustProxy !== true,
    cookiePort: port,
    hosts: [...listened, ...proxied],
    origins: [...listened.map((h) => `${scheme}://${h}`), ...proxied.map((h) => `https://${h}`)],
    remoteAddress: (c) => from.address(c.req.raw.headers, (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress),
    secureRequest: (c) => from.secure(c.req.raw.headers),
  });
  return {
    url: `${scheme}://${bare}:${port}`,
    port,
    loopback,
    liveSubscribers: () => hub.subscribers,
    close: async (graceMs = 10_000) => {
      // Only a run's stream ends by itself: each is ended first, with a retry hint, so the socket can close.
      // The grace counts from here: a hub whose last store read never returns (a database gone) cannot hold the stop past it.
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      cut.unref();
      await Promise.race([hub.close(), new Promise((r) => setTimeout(r, graceMs).unref())]);
      await new Promise<void>((resolve) => {
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
