/**
 * The hostile cases stay: every file the folder's README names exists and holds tests, and every
 * test file here is named there, so a restructuring that drops one fails here instead of silently.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const DIR = import.meta.dirname;
const named = [...readFileSync(join(DIR, "README.md"), "utf8").matchAll(/`([a-z0-9-]+\.(?:test\.)?ts)`/g)].map((m) => m[1] ?? "");

describe("the hostile cases", () => {
  it("every file the README names is here, and every test file names a case", () => {
    expect(named.length).toBeGreaterThan(30);
    const missing = named.filter((f) => !existsSync(join(DIR, f)));
    expect(missing, "named in test/hostile/README.md but gone").toEqual([]);
    for (const f of named.filter((n) => n.endsWith(".test.ts"))) expect(readFileSync(join(DIR, f), "utf8"), f).toMatch(/\bit(?:\.each\([^)]*\))?\(/);
    const unnamed = readdirSync(DIR).filter((f) => f.endsWith(".ts") && f !== "manifest.test.ts" && !named.includes(f));
    expect(unnamed, "in test/hostile but named nowhere in its README").toEqual([]);
  });
});
