/**
 * An encrypted store's keys (`DataKeys`): kept as given, listed oldest first, an id present left
 * as it was (two openers setting a store up agree on the first rows), re-wrapped all or none,
 * replaced all at once (an import's target taking the dump's keys).
 */
import type { DataKeyRow, Store } from "../types.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

const key = (id: string, at: number, kekId = "k-one"): DataKeyRow => ({ id, kekId, wrapped: `wrapped-${id}-${kekId}`, createdAt: at });

export function describeDataKeys(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  describe("data keys", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("a new store has none; added keys are listed oldest first, then by id", async () => {
      expect(await store.dataKeys()).toEqual([]);
      await store.addDataKeys([key("d2", 20), key("mac", 10), key("d1", 10)]);
      expect(await store.dataKeys()).toEqual([key("d1", 10), key("mac", 10), key("d2", 20)]);
    });

    it("an id present is kept as it was: the first writer's key wins", async () => {
      await store.addDataKeys([key("d1", 10)]);
      await store.addDataKeys([key("d1", 11, "k-two"), key("d3", 12, "k-two")]);
      expect(await store.dataKeys()).toEqual([key("d1", 10), key("d3", 12, "k-two")]);
    });

    it("re-wrapping replaces each key's wrapping; one absent key refuses them all", async () => {
      await store.addDataKeys([key("d1", 10), key("mac", 10)]);
      await store.rewrapDataKeys([{ id: "d1", kekId: "k-two", wrapped: "w1" }, { id: "mac", kekId: "k-two", wrapped: "w2" }]);
      expect(await store.dataKeys()).toEqual([
        { id: "d1", kekId: "k-two", wrapped: "w1", createdAt: 10 },
        { id: "mac", kekId: "k-two", wrapped: "w2", createdAt: 10 },
      ]);
      const refused = await store.rewrapDataKeys([{ id: "d1", kekId: "k-three", wrapped: "x" }, { id: "nope", kekId: "k-three", wrapped: "y" }]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({ code: "STEAD_KEY_MISSING" });
      expect((await store.dataKeys()).map((k) => k.kekId)).toEqual(["k-two", "k-two"]);
    });

    it("replacing the keys leaves exactly the rows given; an empty list leaves none", async () => {
      await store.addDataKeys([key("d1", 10), key("mac", 10), key("d9", 30)]);
      await store.replaceDataKeys([key("mac", 5, "k-two"), key("d1", 5, "k-two"), key("d2", 6, "k-two")]);
      expect(await store.dataKeys()).toEqual([key("d1", 5, "k-two"), key("mac", 5, "k-two"), key("d2", 6, "k-two")]);
      await store.replaceDataKeys([]);
      expect(await store.dataKeys()).toEqual([]);
    });
  });
}
