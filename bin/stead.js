#!/usr/bin/env node
// The CLI is compiled to dist/ by `npm run build` (`npm pack` and `npm publish` run it through "prepack").
const entry = await import("../dist/cli/main.js").catch((/** @type {unknown} */ e) => {
  process.stderr.write(`stead: cannot load the compiled CLI (${e instanceof Error ? e.message : String(e)}) — run \`npm run build\` in the stead package\n`);
  process.exit(70);
});
await entry.cli();
