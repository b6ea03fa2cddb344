/**
 * Released migrations are never edited (migrations are add-only): a store migrated by an earlier
 * release has run exactly this text, and a later migration can only build on it. Each one's text
 * is pinned here by digest, and released ones run from a literal file (released-migrations.ts in
 * each dialect, written by scripts/freeze-migrations.ts at release) that imports no living code:
 * editing the schema description or the mutation plan cannot change what an old migration runs.
 * A new migration adds a line; no line ever changes.
 */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../src/store/sqlite/index.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS as PG_MIGRATIONS } from "../src/store/postgres/migrations.js";
import { RELEASED_MIGRATIONS as PG_RELEASED } from "../src/store/postgres/released-migrations.js";
import { RELEASED_MIGRATIONS as SQLITE_RELEASED } from "../src/store/sqlite/released-migrations.js";
import { ROOT } from "./cli-helpers.js";
// Not yet released: keyed by its constant, so renumbering it before release moves its line too.

const RELEASED: Record<"sqlite" | "postgres", Record<number, string>> = {
  sqlite: {
    1: "594be83b5ffa41fea61aa660213998bf9fdd121910af2b65e6e20326b33558f3",
    2: "7251161e968e712d5d764ebaa468bf79abed028a6dcc7a59aa8b0d1be60a16dc",
    3: "2c056716b09e2d09d570c0d28df346a1f0bbeb8721640ad311cc9fdd0ae6bd69",
    4: "a4b9a791ab959c970de69c941b01708b7c2de7f28790bb2eaefe435eed192bff",
    5: "8dffd47f708942fa1d984e87a8c40d26654c523aec3c055dad54a44ba47eb140",
    6: "3037e3ebfa00726c2f71e5a2ccfcfb6b4edc08caf178a6a243bfcc0c8799ee11",
    7: "21922248433e6521a5da8610a888db5baafe238c9941ca2d79977157d2a506ec",
    8: "d7b5418b3b6a340fee373390647582341b80255c7c65fa530672f752240913e1",
    9: "d2bd513c2a559da2aa9a2733917508e38e6a46c388b3b11e58bcf624eaa786d0",
    10: "c0fcad81cc1eed7ec0485036fea92aa80f39e474b49b0b9ad96f32fcea8808cb",
  },
  postgres: {
    1: "26b21ca0405184c5a68db7924c2829059f0ccca380015cfb42e02af5dcfb385a",
    2: "3b11e7db05cff5776c2f5d28bf71cf7862d0f89d0fd01dda4083b9ec07e75579",
    3: "ddf71c3b92cf28ee497af996849b88644c87cf17694fc4cb350d99a23815925f",
    4: "9983d1e6eacb4d3a1ed540a41674c7393493eb43cb21b0dd5ff90a0a8fae36e7",
    5: "b75287238d68837090d0e13d24dd766eab5bedd2e285ad8502bd7829fc67940c",
    6: "c5dd753862663047e3283645ce650e8ef6f449b78c3d42920490d8d6c406194f",
    7: "547bbbd59dd99f5b54a586cb5f2a12931c16813e0fbb8bf040764d54e3c83a3a",
    8: "326710f6c0975ce65194895c0d4569c14e929eb53c36a18868123a55de229bec",
    9: "370f87628ec4f79cc4db1c17d3eb2992e481757e9f863d50f335a950d4dfd374",
    10: "ee3286349508310195f5ac48418560a96d5bef04c5a000812b642ffd49bc2571",
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

it.each([
  ["sqlite", SQLITE_MIGRATIONS, SQLITE_RELEASED],
  ["postgres", PG_MIGRATIONS, PG_RELEASED],
] as const)("%s runs its released migrations from the literal file, which imports nothing living", (dialect, migrations, frozen) => {
  const released = migrations.filter((m) => m.version in RELEASED[dialect]);
  expect(released.every((m) => frozen.includes(m))).toBe(true);
  expect(frozen.map((m) => m.version)).toEqual(Object.keys(RELEASED[dialect]).map(Number));
  const text = readFileSync(join(ROOT, "src", "store", dialect, "released-migrations.ts"), "utf8");
  expect(text.match(/^import .*$/gm)).toEqual(['import type { Migration } from "../sql/migration-log.js";']);
  // No interpolation: every `${` in the text is escaped.
  expect(/(^|[^\\])\$\{/.test(text)).toBe(false);
});
