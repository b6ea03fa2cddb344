/** Migrating, checking and closing a store (`StoreLifecycle`). */
import type { Store } from "../types.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeLifecycle(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created } = h;
  describe("schema", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("migrate() is idempotent and keeps existing data", async () => {
      const before = await store.check();
      await created("r1");
      await store.migrate();
      await store.migrate();
      expect(await store.getRun("r1")).toMatchObject({ id: "r1", status: "pending" });
      expect(await store.check()).toEqual(before);
    });

    it("check() on a migrated store reports dialect, location and schema version", async () => {
      const info = await store.check();
      expect(info.dialect).toBe(store.dialect);
      expect(info.location).toBe(store.location);
      expect(Number.isInteger(info.schemaVersion)).toBe(true);
      expect(info.schemaVersion).toBeGreaterThanOrEqual(1);
    });

    it("close() is idempotent", async () => {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
