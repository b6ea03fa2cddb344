/** `npm run docs`: writes the generated references (scripts/reference/) and says which changed. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderReferences } from "./reference/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const { path, text } of renderReferences()) {
  const file = join(root, path);
  let before: string | undefined;
  try {
    before = readFileSync(file, "utf8");
  } catch {
    before = undefined;
  }
  if (before === text) continue;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(`wrote ${path}\n`);
}
