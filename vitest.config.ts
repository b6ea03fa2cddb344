import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One Postgres server per run (embedded, or STEAD_TEST_DATABASE_URL), shared by all files.
    globalSetup: ["test/setup/postgres-global.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
