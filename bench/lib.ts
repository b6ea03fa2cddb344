import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** The built library, as an application runs it (`npm run bench` builds first). */
export const distUrl = pathToFileURL(resolve(import.meta.dirname, "../dist/index.js")).href;

/**
 * Loaded by URL and typed from src/, so the bench type-checks before dist/ exists while timing
 * the compiled code, not a TypeScript loader's output.
 */
export const stead = (await import(distUrl)) as typeof import("../src/index.js");

/** The built stores, for a workload that opens one with options `createStead` does not take (synchronous=NORMAL). */
export const stores = (await import(pathToFileURL(resolve(import.meta.dirname, "../dist/store/index.js")).href)) as typeof import("../src/store/index.js");

/** The built cipher, for the cost of sealing one value on its own. */
export const cipher = (await import(pathToFileURL(resolve(import.meta.dirname, "../dist/store/encryption/cipher.js")).href)) as typeof import("../src/store/encryption/cipher.js");
