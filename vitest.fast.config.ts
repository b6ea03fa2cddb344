import { defineConfig } from "vitest/config";

/**
 * The fast tier (`npm run test:fast`), for the inner loop: the engine, agents, the SQLite store
 * and its conformance, the server and the typed client, in process, on SQLite only. No build,
 * no Postgres, no CLI processes, no browser, no crash children: `npm test` runs all of those and
 * stays the command that decides. A file that needs one of them fails here with a message saying
 * so; keep such files out of this list.
 */
export default defineConfig({
  test: {
    include: [
      "test/engine.*.test.ts",
      "test/agent.*.test.ts",
      "test/store.sqlite*.test.ts",
      "test/store.snapshot-write.test.ts",
      "test/store.layered.test.ts",
      "test/store.capabilities.test.ts",
      "test/store.sql-once.test.ts",
      "test/store.migrations-frozen.test.ts",
      "test/server.*.test.ts",
      "test/client.test.ts",
      "test/mcp.definitions.test.ts",
      "test/mcp.http.test.ts",
      "test/stead.control-api.test.ts",
      "test/control-*.test.ts",
      "test/worker-state.test.ts",
      "test/worker.group-commit-in-flight.test.ts",
      "test/workspace.{capture,gc,hooks,restore,sessions,watch}.test.ts",
      "test/redact*.test.ts",
      "test/hostile/redaction-rules.test.ts",
      "test/hostile/streamed-secret.test.ts",
      "test/encryption.test.ts",
      "test/tokens.test.ts",
      "test/definitions.test.ts",
      "test/thrown-values.test.ts",
      "test/payload-depth.test.ts",
      "test/architecture.test.ts",
      "test/docs.reference.test.ts",
      "test/api-types.test.ts",
    ],
    exclude: [
      // Child processes (crash tests, the CLI, a server in its own process) or the built package.
      "test/agent.crash.test.ts",
      "test/agent.cli.test.ts",
      "test/agent.sessions-show.test.ts",
      "test/server.cli.test.ts",
      "test/server.kill.test.ts",
      "test/server.tls.test.ts",
      // Postgres alone.
      "test/control-idempotency.test.ts",
      "test/engine.follow-stream.test.ts",
    ],
    env: { STEAD_TEST_STORES: "sqlite" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
