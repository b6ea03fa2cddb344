import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { isDefinition, type AnyDefinition } from "../engine/definitions/definition.js";
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

/** A file's definitions with the export each was first found under (`default` for a default export). */
function definitionsOf(namespace: Record<string, unknown>): { definition: AnyDefinition; exportName: string }[] {
  const found: { definition: AnyDefinition; exportName: string }[] = [];
  const add = (v: unknown, exportName: string) => {
    if (isDefinition(v) && !found.some((f) => f.definition === v)) found.push({ definition: v, exportName });
  };
  for (const [key, value] of Object.entries(namespace)) {
    if (key !== "default") add(value, key);
  }
  const dflt = namespace.default;
  if (isDefinition(dflt)) add(dflt, "default");
  // A CommonJS module's exports arrive as the default export.
  else if (typeof dflt === "object" && dflt !== null) for (const [key, value] of Object.entries(dflt)) add(value, key);
  return found;
}

/**
 * Where a syntax error is: CommonJS (and newer Nodes) put `file:line` first in the stack; for an
 * ES module Node 20 keeps it out of the error, so `node --check` (parse only, nothing runs) is
 * asked. Undefined when neither tells (the error is in a module the file imports).
 */
function syntaxErrorLocation(e: unknown, file: string): { file: string; line: number } | undefined {
  if (!(e instanceof Error) || e.name !== "SyntaxError") return undefined;
  const fromText = (text: string | undefined) => {
    const m = /^((?:file:\/\/)?\/[^\n]*?):(\d+)$/m.exec(text?.split("\n")[0] ?? "");
    if (!m?.[1] || !m[2]) return undefined;
    return { file: m[1].startsWith("file://") ? fileURLToPath(m[1]) : m[1], line: Number(m[2]) };
  };
  const inStack = fromText(e.stack);
  if (inStack || !/\.[mc]?js$/.test(file)) return inStack;
  const check = spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: 10_000 });
  return check.status === 0 ? undefined : fromText(check.stderr);
}

/** Imports a `.ts`/`.js` file (relative to the current directory) and returns the definitions it exports. */
export async function loadFile(path: string): Promise<LoadedFile> {
  return (await loadWithExports(path)).loaded;
}

async function loadWithExports(path: string): Promise<{ loaded: LoadedFile; exportNames: Map<AnyDefinition, string> }> {
  const file = resolve(process.cwd(), path);
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new SteadError("STEAD_BAD_PATH", `no file ${path} (looked at ${file})`, { fix: "pass the path of a .ts or .js file that exports a workflow" });
  }
  const typescript = /\.[mc]?tsx?$/.test(file);
  // Registering tsx starts a loader thread (about 100 ms on Node 20): only TypeScript needs it.
  if (typescript) await registerTsx();
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    if (isSteadError(e)) throw e;
    const msg = errorMessage(e);
    const at = syntaxErrorLocation(e, file);
    throw new SteadError("STEAD_INVALID_DEFINITION", `cannot load ${path}: ${at ? `SyntaxError at line ${at.line} of ${at.file}: ` : ""}${msg}`, {
      fix: `fix the error in the file; \`${typescript ? "npx tsx" : "node"} ${path}\` shows it in full`,
      cause: e,
    });
  }
  const found = definitionsOf(namespace);
  if (found.length === 0) {
    throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `${path} exports no workflow`, {
      fix: 'export one: export const x = workflow("name", async (ctx, input) => ...)',
    });
  }
  for (const [i, f] of found.entries()) {
    const twin = found.slice(i + 1).find((g) => g.definition.name === f.definition.name);
    if (twin) {
      // A run of either could never be executed: every worker refuses two definitions with one name.
      throw new SteadError("STEAD_INVALID_DEFINITION", `${path} exports two workflows named "${f.definition.name}": \`${f.exportName}\` and \`${twin.exportName}\``, {
        fix: "give each workflow a unique name (the first argument of workflow() or agent())",
      });
    }
  }
  return { loaded: { file, definitions: found.map((f) => f.definition) }, exportNames: new Map(found.map((f) => [f.definition, f.exportName])) };
}

/** Loads every file; definitions from all of them, each object once. Two different ones with one name are refused. */
export async function loadFiles(paths: readonly string[]): Promise<AnyDefinition[]> {
  const all = new Map<string, { definition: AnyDefinition; exportName: string; path: string }>();
  for (const p of paths) {
    const { loaded, exportNames } = await loadWithExports(p);
    for (const d of loaded.definitions) {
      const seen = all.get(d.name);
      if (seen && seen.definition !== d) {
        throw new SteadError("STEAD_INVALID_DEFINITION", `two workflows are named "${d.name}": \`${seen.exportName}\` of ${seen.path} and \`${exportNames.get(d) ?? "?"}\` of ${p}`, {
          fix: "give each workflow a unique name, or pass only one of the files",
        });
      }
      all.set(d.name, { definition: d, exportName: exportNames.get(d) ?? "?", path: p });
    }
  }
  return [...all.values()].map((v) => v.definition);
}

/**
 * The workflow to run: the only one, or the one `name` names. `flag`: the option that chooses
 * one, as a refusal's fix names it (`stead send` has `--name`).
 */
export function pickWorkflow(loaded: LoadedFile, path: string, name: string | undefined, flag = "--workflow"): AnyDefinition {
  const names = loaded.definitions.map((d) => d.name);
  if (name !== undefined) {
    const d = loaded.definitions.find((x) => x.name === name);
    if (!d) {
      throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `${path} exports no workflow named "${name}"; it exports ${names.join(", ")}`, {
        fix: `pass one of them: ${flag} ${names[0] ?? "<name>"}`,
      });
    }
    return d;
  }
  const [only, ...rest] = loaded.definitions;
  if (only && rest.length === 0) return only;
  throw new SteadError("STEAD_BAD_OPTION", `${path} exports ${names.length} workflows (${names.join(", ")})`, {
    fix: `choose one with ${flag} ${names[0] ?? "<name>"}`,
  });
}
