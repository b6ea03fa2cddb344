import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll } from "vitest";
import { launchBrowser, openConsole, serveConsole, type ConsolePage } from "./console.js";
import { tempDir } from "./temp-store.js";

/**
 * For one describe: `open(seed, path)` makes a store encrypted with a new key at a fresh
 * directory's `.stead/stead.db` (`seed` writes it, as it likes, with that key), serves the console
 * over it with the key in the environment, and signs in at `path`; `url` is the server's. The browser, servers and
 * directories go when the describe ends; the caller closes the page.
 */
export function sealedStoreConsole(prefix: string): { open(seed: (storePath: string, key: Buffer) => Promise<unknown>, path: string): Promise<{ c: ConsolePage; url: string }> } {
  let browser: Browser | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await browser?.close();
  });
  return {
    async open(seed, path) {
      const key = randomBytes(32);
      const dir = tempDir(`${prefix}-`);
      const keyDir = tempDir(`${prefix}-keys-`);
      cleanups.push(dir.remove, keyDir.remove);
      await seed(join(dir.dir, ".stead", "stead.db"), key);
      browser ??= await launchBrowser();
      const server = await serveConsole({ dir: dir.dir, env: { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: keyDir.dir } });
      cleanups.push(() => server.stop());
      return { c: await openConsole(browser, server, { signIn: "login-url", path }), url: server.url };
    },
  };
}
