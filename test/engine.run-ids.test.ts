/**
 * New run ids: valid, time-ordered by their prefix, and distinct, across many refills of the pool
 * of random bytes they draw from (every 512 ids).
 */
import { describe, expect, it } from "vitest";
import { isValidRunId, newRunId } from "../src/engine/ids.js";

describe("newRunId", () => {
  it("gives 5,000 distinct valid ids whose random parts are distinct too", () => {
    const ids = Array.from({ length: 5_000 }, () => newRunId());
    expect(ids.every((id) => isValidRunId(id) && /^run_[0-9a-z]+[0-9a-f]{12}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });

  it("sorts by creation: an id made later never sorts before one made a millisecond earlier", async () => {
    const a = newRunId();
    await new Promise((r) => setTimeout(r, 2));
    expect(newRunId().slice(0, -12) > a.slice(0, -12)).toBe(true);
  });
});
