import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isDefinition, type AnyDefinition } from "../engine/definition.js";
import { SteadError, errorMessage, isSteadError } from "../errors.js";

export interface LoadedFile {
  /** Absolute path. */
  file: string;
  definitions: AnyDefinition[];
}

let registered: Promise<void> | undefined;

/**
 * Registers tsx for the whole process, for ESM and CommonJS. Not `tsImport`: it loads a CommonJS
 * `.ts` file (one with no `"type": "module"` package.json above it) through a data: URL, so
 * `workflow()` cannot tell its module from the stack, and the run records no module and a
 * fingerprint of nothing. Registered once; definitions may import more `.ts` files while they run.
 */
function registerTsx(): Promise<void> {
  registered ??= (async () => {
    const esm = await import("tsx/esm/api");
    const cjs = await import("tsx/cjs/api");
    esm.register();
    cjs.register();
  })();
  return registered;
}

function definitionsOf(namespace: Record<string, unknown>): AnyDefinition[] {
  const found: AnyDefinition[] = [];
  const add = (v: unknown) => {
    if (isDefinition(v) && !found.includes(v)) found.push(v);
  };
  for (const [key, value] of Object.entries(namespace)) {
    if (key !== "default") add(value);
  }
  const dflt = namespace.default;
  if (isDefinition(dflt)) add(dflt);
  // A CommonJS module's exports arrive as the default export.
  else if (typeof dflt === "object" && dflt !== null) for (const value of Object.values(dflt)) add(value);
  return found;
}

/** Imports a `.ts`/`.js` file (relative to the current directory) and returns the definitions it exports. */
export async function loadFile(path: string): Promise<LoadedFile> {
  const file = resolve(process.cwd(), path);
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new SteadError("STEAD_BAD_INPUT", `no file ${path} (looked at ${file})`, { fix: "pass the path of a .ts or .js file that exports a workflow" });
  }
  // Registering tsx starts a loader thread (about 100 ms on Node 20): only TypeScript needs it.
  if (/\.[mc]?tsx?$/.test(file)) await registerTsx();
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    if (isSteadError(e)) throw e;
    const msg = errorMessage(e);
    throw new SteadError("STEAD_BAD_INPUT", `cannot load ${path}: ${msg}`, {
      fix: `fix the error in the file; \`npx tsx ${path}\` shows it in full`,
      cause: e,
    });
  }
  const definitions = definitionsOf(namespace);
  if (definitions.length === 0) {
    throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `${path} exports no workflow`, {
      fix: 'export one: export const x = workflow("name", async (ctx, input) => ...)',
    });
  }
  return { file, definitions };
}

/** Loads every file; definitions from all of them, each object once. */
export async function loadFiles(paths: readonly string[]): Promise<AnyDefinition[]> {
  const all: AnyDefinition[] = [];
  for (const p of paths) {
    for (const d of (await loadFile(p)).definitions) if (!all.includes(d)) all.push(d);
  }
  return all;
}

/** The workflow to run: the only one, or the one `--workflow` names. */
export function pickWorkflow(loaded: LoadedFile, path: string, name: string | undefined): AnyDefinition {
  const names = loaded.definitions.map((d) => d.name);
  if (name !== undefined) {
    const d = loaded.definitions.find((x) => x.name === name);
    if (!d) {
      throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `${path} exports no workflow named "${name}"; it exports ${names.join(", ")}`, {
        fix: `pass one of them: --workflow ${names[0] ?? "<name>"}`,
      });
    }
    return d;
  }
  const [only, ...rest] = loaded.definitions;
  if (only && rest.length === 0) return only;
  throw new SteadError("STEAD_BAD_INPUT", `${path} exports ${names.length} workflows (${names.join(", ")})`, {
    fix: `choose one with --workflow ${names[0] ?? "<name>"}`,
  });
}
