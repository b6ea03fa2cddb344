/**
 * `stead serve`: the HTTP API over the store, on 127.0.0.1 by default; with `--worker`, a worker in
 * the same process over the files' definitions. The first SIGINT or SIGTERM shuts down gracefully:
 * the server stops taking requests (in-flight ones finish, at most 10 s), then the worker's runs
 * finish their current step within its grace and are handed back; a second signal exits at once.
 *
 * It prints a one-time browser login URL (server/login-token.ts) when its output is a terminal or
 * `--login-url` asks: a log that captures the output (journald, a file) would otherwise keep a
 * live operator token.
 *
 * A store deleted or replaced under it (STEAD_STORE_LOST) ends it with exit 7, worker or not: the
 * store refuses every request from then on, and the watch (store-watch.ts) finds the loss within
 * about a second even when no request does.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { SteadError } from "../../errors.js";
import { DEFAULT_PORT, isLoopback } from "../../server/address.js";
import { act, example, openStead, parsePositiveInt, print } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { parseListen } from "../listen-address.js";
import { reportError } from "../report-error.js";
import { watchStore } from "../store-watch.js";
import { checkWorkerOptions, cliWorker, withWorkerOptions, workerDefinitions, type WorkerCliOptions } from "../worker-process.js";

interface ServeOptions extends WorkerCliOptions {
  worker?: string[];
  listen: string;
  host?: string[];
  tlsCert?: string;
  tlsKey?: string;
  trustProxy?: boolean;
  loginUrl?: boolean;
  maxStreams: string;
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new SteadError("STEAD_BAD_PATH", `cannot read the TLS ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { fix: `pass a readable PEM file to --tls-${what}` });
  }
}

export function registerServe(program: Command): void {
  const serve = withWorkerOptions(
    program
      .command("serve")
      .description("serve the HTTP API (/api/v1, its OpenAPI document, /metrics, /healthz, /readyz) over the store; with --worker, also run a worker")
      .option("--worker <files...>", "also claim and execute runs of the workflows these files export, in this process (as `stead worker` does; the worker options apply to it)"),
  )
    .option("--listen <host:port>", "address to listen on; a non-loopback address needs tokens", `127.0.0.1:${DEFAULT_PORT}`)
    .option("--host <name...>", "another Host name the server is reached by (a DNS name, behind a proxy)")
    .option("--tls-cert <file>", "serve HTTPS with this certificate (PEM)")
    .option("--tls-key <file>", "the certificate's private key (PEM)")
    .option("--trust-proxy", "behind a TLS-terminating proxy: honour X-Forwarded-For and X-Forwarded-Proto (ignored without it), serve the --host names without a port, and serve no read without a token")
    .option("--max-streams <n>", "live event streams served at once; past it a new one is refused (503 STEAD_TOO_MANY_STREAMS)", "10000")
    .option("--login-url", "print a one-time browser login URL even when the output is not a terminal")
    .option("--no-login-url", "print no browser login URL (none is made)")
    .action(
      act(async (o: ServeOptions, cmd: Command) => {
        const { host, port } = parseListen(o.listen);
        if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) throw new SteadError("STEAD_BAD_OPTION", "--tls-cert and --tls-key go together", { fix: "pass both, or neither" });
        const tls = o.tlsCert !== undefined && o.tlsKey !== undefined ? { cert: readPem(o.tlsCert, "cert"), key: readPem(o.tlsKey, "key") } : undefined;
        checkWorkerOptions(o);
        const maxStreams = parsePositiveInt(o.maxStreams, "--max-streams");
        // Loaded before the store is opened, as `stead worker` does: a file that does not load changes nothing.
        const definitions = o.worker ? await workerDefinitions(o.worker) : undefined;
        // Loaded here, not at the CLI's start: the server's modules cost every other verb ~0.25 s.
        const [{ tokensOf }, { listen }, login, { Metrics }] = await Promise.all([
          import("../../server/auth.js"),
          import("../../server/listen.js"),
          import("../../server/login-token.js"),
          import("../../server/metrics.js"),
        ]);
        const stead = await openStead(cmd, true);
        const authenticate = tokensOf(stead);
        if (!isLoopback(host) && !(await stead.tokens.list()).some((t) => t.revokedAt === null)) {
          await stead.close();
          throw new SteadError("STEAD_BAD_OPTION", `refusing to serve ${host}: no tokens are defined`, { fix: "create one first (`stead tokens create --role admin --name <you>`), or listen on 127.0.0.1" });
        }
        for (const name of await login.sweepLoginTokens(stead)) print(`revoked login token ${name}, left by a server that did not stop`);
        const wantLogin = o.loginUrl ?? process.stdout.isTTY === true;
        const minted = wantLogin ? await login.mintLoginToken(stead) : undefined;
        // One Stead for both: the worker hears this server's writes at once (in-process wake-ups on SQLite).
        const worker = definitions ? cliWorker(stead, definitions, o) : undefined;
        const metrics = new Metrics({ stead });
        if (worker) metrics.observeWorker(worker.worker);
        const server = await listen({
          stead,
          authenticate,
          host,
          port,
          metrics,
          streams: { maxStreams },
          ...(o.host ? { extraHosts: o.host } : {}),
          ...(tls ? { tls } : {}),
          ...(o.trustProxy ? { trustProxy: true } : {}),
          ...(minted ? { loginTokenName: minted.name } : {}),
          logError: (line) => process.stderr.write(`stead serve: ${line}\n`),
        }).catch(async (e: unknown) => {
          if (minted) await login.revokeLoginToken(stead, minted.name);
          await stead.close();
          throw e;
        });
        print(`serving ${stead.location} on ${server.url}/api/v1 (OpenAPI: ${server.url}/api/v1/openapi.json)`);
        let expiry: NodeJS.Timeout | undefined;
        if (minted) {
          // Behind a proxy the browser reaches the server by its public https name, not the listen address.
          const publicName = o.trustProxy ? o.host?.[0] : undefined;
          print(`sign in a browser (once, until ${new Date(minted.expiresAt).toISOString()}): ${login.loginUrl(publicName ? `https://${publicName}` : server.url, minted.token)}`);
          expiry = setTimeout(() => void login.revokeLoginToken(stead, minted.name).catch(() => undefined), minted.expiresAt - Date.now());
          expiry.unref();
        }
        const watch = watchStore(stead);
        const fatal = new Promise<{ fatal: unknown }>((resolve) => {
          worker?.worker.once("fatal", (e) => resolve({ fatal: e }));
          void watch.lost.then((e) => resolve({ fatal: e }));
        });
        if (worker) {
          worker.worker.start();
          print(`worker ${worker.worker.owner.workerId} started: ${worker.names.join(", ")} (concurrency ${worker.concurrency})`);
        }
        const stopped = new Promise<void>((resolve) => {
          const stop = () => {
            process.once("SIGINT", () => process.exit(130));
            process.once("SIGTERM", () => process.exit(143));
            print(`stopping: in-flight requests finish${worker ? ", then runs in flight finish their current step and are handed back" : ""} (signal again to exit at once)`);
            resolve();
          };
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
        const ended = await Promise.race([stopped, fatal]);
        watch.stop();
        // The server first stops taking requests (so no answer lands while the worker drains), then the worker gets its grace.
        await server.close();
        if (typeof ended === "object") {
          // The store is gone: the store refuses every write and read, so a worker's runs stop without writing; nothing more can be recorded.
          clearTimeout(expiry);
          await stead.close().catch(() => undefined);
          reportError(ended.fatal);
          return EXIT.store;
        }
        if (worker) {
          const inFlight = worker.worker.inFlight;
          await worker.worker.stop();
          print(`worker stopped${inFlight ? `; ${inFlight} run(s) handed back for any worker` : ""}`);
        }
        clearTimeout(expiry);
        if (minted) await login.revokeLoginToken(stead, minted.name).catch(() => undefined);
        await stead.close();
        print("server stopped");
        return EXIT.ok;
      }),
    );
  example(serve, "stead serve", `stead serve --listen 127.0.0.1:8080 --store postgres://stead@db/stead`, "stead serve --listen 127.0.0.1:7420 --trust-proxy --host stead.example.com", "stead serve --worker ./agents.ts");
}
