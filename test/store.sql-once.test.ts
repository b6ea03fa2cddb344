/**
 * A statement is written once: SQL that both dialect folders (src/store/sqlite, src/store/postgres)
 * would spell alike, up to placeholders (`?` / `$1`), casts (`::text[]`), the lease clock
 * (`stead_now_ms()` / a bound now), a list bound as a JSON array or an array, table aliases, case
 * and spacing, lives in src/store/sql/ and passes through
 * the dialect. A copy in both folders fails here unless ALLOWED names it with the reason.
 * A port's statements split out of a store class live in a file named for the port
 * (ports/claims.ts → sqlite/claims.ts and postgres/claims.ts): one dialect's without the other's
 * fails here too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./cli-helpers.js";

/** Normalised statement → why it is written in each dialect. */
const ALLOWED: Record<string, string> = {};

/** The string and template literals of a TypeScript file (a template's `${…}` kept as `${}`). */
function literals(text: string): string[] {
  const re = /`((?:[^`\\$]|\\.|\$(?!\{)|\$\{(?:[^{}]|\{[^{}]*\})*\})*)`|"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'/g;
  return [...text.matchAll(re)].map((m) => m[1] ?? m[2] ?? m[3] ?? "");
}

export const normalised = (sql: string): string =>
  sql
    .replace(/\$\{(?:[^{}]|\{[^{}]*\})*\}/g, "${}")
    .replace(/\$\d+/g, "?")
    .replace(/::[a-z_]+(\[\])?/gi, "")
    .replace(/stead_now_ms\(\)/g, "?")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase()
    // A list bound as SQLite's JSON array or Postgres's array: the same membership.
    .replace(/(\w+(?:\.\w+)?) in \(select value from json_each\(\?\)\)/g, "$1 = any(?)")
    // Table aliases.
    .replace(/\b\w+\.(\w+)/g, "$1");

/** Each statement-shaped literal of a dialect folder, normalised, with the file it is in. */
function statements(dialect: "sqlite" | "postgres"): Map<string, string> {
  const dir = join(ROOT, "src", "store", dialect);
  const out = new Map<string, string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    for (const l of literals(readFileSync(join(dir, file), "utf8"))) {
      if (/^\s*(select|insert|update|delete|with)\s/i.test(l) && l.length > 20) out.set(normalised(l), `src/store/${dialect}/${file}`);
    }
  }
  return out;
}

describe("SQL written once", () => {
  it("finds the statements it compares (the scan is not blind)", () => {
    expect(statements("sqlite").size).toBeGreaterThan(20);
    expect(statements("postgres").size).toBeGreaterThan(20);
    expect(normalised("SELECT 1 FROM t WHERE a = $1 AND b > stead_now_ms() AND c = ANY($2::text[])")).toBe(normalised("select 1 from t where a = ? and b > ? and c = any(?)"));
    expect(normalised("DELETE FROM blobs b WHERE b.hash = ANY($1::text[])")).toBe(normalised("DELETE FROM blobs b WHERE hash IN (SELECT value FROM json_each(?))"));
  });

  it("no statement is spelled in both dialect folders unless allowed with its reason", () => {
    const pg = statements("postgres");
    const both = [...statements("sqlite")].filter(([sql]) => pg.has(sql) && ALLOWED[sql] === undefined).map(([sql, file]) => `${file} and ${pg.get(sql)}: ${sql}`);
    expect(both, "move each into src/store/sql/ (written with ?, passed through the dialect), or allow it here with the reason").toEqual([]);
  });
});

describe("dialect folders", () => {
  it("hold a port's file under the port's name in both, or in neither", () => {
    const ports = readdirSync(join(ROOT, "src", "store", "ports")).filter((f) => f.endsWith(".ts"));
    const has = (dialect: string) => new Set(readdirSync(join(ROOT, "src", "store", dialect)));
    const sqlite = has("sqlite");
    const pg = has("postgres");
    const split = ports.filter((p) => sqlite.has(p) || pg.has(p));
    expect(split.length).toBeGreaterThan(0);
    expect(split.filter((p) => !(sqlite.has(p) && pg.has(p)))).toEqual([]);
  });
});
