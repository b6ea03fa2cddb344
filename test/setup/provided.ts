/**
 * What the global setup (postgres-global.ts) hands to every test file through vitest's
 * `provide` / `inject`. Plain JSON: it crosses from the main process into the test forks.
 */
export interface ProvidedPostgres {
  /** A superuser-ish URL on the shared server; tests create and drop their databases through it. */
  adminUrl: string;
  /** Prefix of every database this run creates, so teardown can drop leftovers on a shared server. */
  databasePrefix: string;
  /** "embedded" when this run started its own server, "external" for STEAD_TEST_DATABASE_URL. */
  source: "embedded" | "external";
}

declare module "vitest" {
  export interface ProvidedContext {
    steadPostgres: ProvidedPostgres;
  }
}
