import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console's built assets ship in the npm package (dist/console) and are served by `stead serve`;
// nothing is fetched from elsewhere at run time, and no script or style is inline (the CSP allows
// only 'self').
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  publicDir: false,
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
