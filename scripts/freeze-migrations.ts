/**
 * Freezes released migrations as literal text: `node --import tsx scripts/freeze-migrations.ts N`
 * writes every migration up to version N, as each dialect renders it today, into
 * src/store/{sqlite,postgres}/released-migrations.ts. Run it when a release ships its migrations,
 * then take them out of the living list in migrations.ts and pin their digests in
 * test/store.migrations-frozen.test.ts. From then on no edit to living code (the schema
 * description, the mutation plan, a commit function) can change what an old migration runs.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MIGRATIONS as PG } from "../src/store/postgres/migrations.js";
import { MIGRATIONS as SQLITE } from "../src/store/sqlite/migrations.js";

const through = Number(process.argv[2]);
if (!Number.isInteger(through) || through < 1) {
  process.stderr.write("usage: node --import tsx scripts/freeze-migrations.ts <last released version>\n");
  process.exit(2);
}

/** `text` as the body of a template literal that evaluates to exactly `text`. */
const literal = (text: string): string => text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${");

for (const [dialect, migrations] of [
  ["sqlite", SQLITE],
  ["postgres", PG],
] as const) {
  const frozen = migrations.filter((m) => m.version <= through);
  const missing = Array.from({ length: through }, (_, i) => i + 1).filter((v) => !frozen.some((m) => m.version === v));
  if (missing.length > 0) throw new Error(`${dialect} has no migration ${missing.join(", ")}`);
  const body = frozen.map((m) => `  {\n    version: ${m.version},\n    name: ${JSON.stringify(m.name)},\n    sql: \`${literal(m.sql)}\`,\n  },\n`).join("");
  const file = fileURLToPath(new URL(`../src/store/${dialect}/released-migrations.ts`, import.meta.url));
  writeFileSync(
    file,
    `/**\n * ${dialect === "sqlite" ? "SQLite" : "Postgres"}'s released migrations (1 to ${through}), frozen as the literal text each ran when it was\n * released (scripts/freeze-migrations.ts wrote this file). Never edit it: a store migrated by\n * that release ran exactly this; test/store.migrations-frozen.test.ts pins each one's digest.\n */\nimport type { Migration } from "../sql/migration-log.js";\n\nexport const RELEASED_MIGRATIONS: readonly Migration[] = [\n${body}];\n`,
  );
  process.stdout.write(`${file}: migrations 1 to ${through}\n`);
}
