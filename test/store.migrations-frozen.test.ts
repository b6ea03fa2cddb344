/**
 * Released migrations are never edited (migrations are add-only): a store migrated by an earlier
 * release has run exactly this text, and a later migration can only build on it. Several are
 * generated from shared source (Postgres's stead_apply_mutation, the schema description's DDL), so
 * a change to that source could rewrite a released migration without anyone touching its file;
 * each one's text is pinned here by digest. A new migration adds a line; no line ever changes.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../src/store/sqlite/index.js";
import { MIGRATIONS as PG_MIGRATIONS } from "../src/store/postgres/index.js";

const RELEASED: Record<"sqlite" | "postgres", Record<number, string>> = {
  sqlite: {
    1: "594be83b5ffa41fea61aa660213998bf9fdd121910af2b65e6e20326b33558f3",
    2: "7251161e968e712d5d764ebaa468bf79abed028a6dcc7a59aa8b0d1be60a16dc",
    3: "2c056716b09e2d09d570c0d28df346a1f0bbeb8721640ad311cc9fdd0ae6bd69",
    4: "a4b9a791ab959c970de69c941b01708b7c2de7f28790bb2eaefe435eed192bff",
    5: "8dffd47f708942fa1d984e87a8c40d26654c523aec3c055dad54a44ba47eb140",
  },
  postgres: {
    1: "26b21ca0405184c5a68db7924c2829059f0ccca380015cfb42e02af5dcfb385a",
    2: "3b11e7db05cff5776c2f5d28bf71cf7862d0f89d0fd01dda4083b9ec07e75579",
    3: "ddf71c3b92cf28ee497af996849b88644c87cf17694fc4cb350d99a23815925f",
    4: "9983d1e6eacb4d3a1ed540a41674c7393493eb43cb21b0dd5ff90a0a8fae36e7",
    5: "b75287238d68837090d0e13d24dd766eab5bedd2e285ad8502bd7829fc67940c",
  },
};

const digest = (sql: string): string => createHash("sha256").update(sql).digest("hex");

it.each([
  ["sqlite", SQLITE_MIGRATIONS],
  ["postgres", PG_MIGRATIONS],
] as const)("%s's released migrations are the text that was released", (dialect, migrations) => {
  const released = RELEASED[dialect];
  const now = Object.fromEntries(migrations.filter((m) => m.version in released).map((m) => [m.version, digest(m.sql)]));
  expect(now).toEqual(released);
});
