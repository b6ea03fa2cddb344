#!/usr/bin/env node
// The CLI is compiled to dist/ (`npm run build`; `npm install` runs it through "prepare").
const entry = await import("../dist/cli/main.js").catch((/** @type {unknown} */ e) => {
  process.stderr.write(`stead: cannot load the compiled CLI (${e instanceof Error ? e.message : String(e)}) — run \`npm run build\` in the stead package\n`);
  process.exit(70);
});
await entry.cli();
