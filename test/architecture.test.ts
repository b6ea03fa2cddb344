/**
 * The layers of docs/ARCHITECTURE.md, checked on src/: no file imports a layer above its own, and
 * no files import each other in a circle. Type-only imports count for both: a type is part of a
 * layer's API, and a circle made only of types still says a type lives in the wrong file.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, importGraph, type ImportEdge } from "./helpers/import-graph.js";
import { storeReaches } from "./helpers/store-reach.js";
import { ROOT } from "./cli-helpers.js";

type Layer = "wire" | "shared" | "store" | "workspace" | "engine" | "agent" | "worker" | "root" | "cli" | "server" | "entry" | "client";

/**
 * What each layer may import besides itself, with no exception: data flows cli/server → root →
 * engine/agent/worker → store. agent and worker are siblings: neither imports the other. The CLI
 * sits above the server only to start it (`stead serve`, `stead mcp`).
 */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  /** The HTTP API's shapes (src/client/api-types.ts): types only, importing nothing; every layer may import it. */
  wire: [],
  shared: ["wire"],
  store: ["shared", "wire"],
  workspace: ["store", "shared", "wire"],
  engine: ["workspace", "store", "shared", "wire"],
  agent: ["engine", "workspace", "store", "shared", "wire"],
  worker: ["engine", "workspace", "store", "shared", "wire"],
  /** The composition root (src/stead/): the `Stead` facade, joining the engine, the agent layer's rules and workers. */
  root: ["agent", "worker", "engine", "workspace", "store", "shared", "wire"],
  /** The HTTP API and the MCP server: a skin over the control API, as the CLI is. */
  server: ["root", "agent", "worker", "engine", "workspace", "store", "shared", "wire"],
  /** The CLI, which also starts the server (`stead serve`). */
  cli: ["server", "root", "agent", "worker", "engine", "workspace", "store", "shared", "wire"],
  entry: ["cli", "server", "root", "agent", "worker", "engine", "workspace", "store", "shared", "wire"],
  /** The typed HTTP client (`stead/client`): nothing of Stead but the API's shapes, not even errors.ts, so it loads no native module and runs wherever fetch does. */
  client: ["wire"],
};

/** The one file of the `wire` layer: it sits in src/client/ because `@stead/client` is published with it. */
const WIRE_FILE = "client/api-types.ts";

/** src/errors.ts and src/thrown.ts are below everything; the package entries (stead, stead/conformance) above everything. */
const TOP_FILES: Record<string, Layer> = { "errors.ts": "shared", "thrown.ts": "shared", "index.ts": "entry", "index.mts": "entry", "conformance.ts": "entry", "conformance.mts": "entry", "client.mts": "client" };

/** Folders whose layer is not their name: src/redaction/ (secret shapes, the redactor, the stream redactor) is below everything, as errors.ts is. */
const FOLDERS: Record<string, Layer> = { stead: "root", redaction: "shared" };

function layerOf(file: string): Layer | undefined {
  if (file === WIRE_FILE) return "wire";
  const [first, ...rest] = file.split("/");
  if (first === undefined) return undefined;
  if (rest.length === 0) return TOP_FILES[first];
  if (first in FOLDERS) return FOLDERS[first];
  return first in MAY_IMPORT && first !== "shared" && first !== "entry" && first !== "root" && first !== "wire" ? (first as Layer) : undefined;
}

/**
 * Import cycles there today (strongly connected files, type imports counted), each sorted. Strict:
 * a cycle that shrank or went must be updated here; a new one fails.
 */
const ALLOWED_CYCLES: readonly (readonly string[])[] = [];

/** The cycles above that remain with type-only imports left out: these load a half-initialised module at run time. */
const ALLOWED_RUNTIME_CYCLES: readonly (readonly string[])[] = [];

/** The skins over the control API: they never reach into the store. */
const SKINS: readonly Layer[] = ["cli", "server"];

/** What a skin may import of store/: the records and constants a view is made of, no store. */
const SKIN_MAY_IMPORT_FROM_STORE: readonly string[] = ["store/types.ts"];

const graph = importGraph(join(ROOT, "src"));
const skinFiles = graph.files.filter((f) => SKINS.includes(layerOf(f) as Layer));

/** A file that reaches into the store in each way a skin could, to show the check finds them. */
const REACHING_FIXTURE = "test/fixtures/architecture/reaches-store.ts";
let reaches: string[] | undefined;
/** One type-checked program for the skins and the fixture (building it is the slow part). */
const storeReachesIn = (prefix: string) => (reaches ??= storeReaches(ROOT, [...skinFiles.map((f) => join("src", f)), REACHING_FIXTURE])).filter((r) => r.startsWith(prefix));
const edgeText = (e: ImportEdge) => `${e.from} -> ${e.to}`;

describe("architecture", () => {
  it("the console (console/src) imports nothing of Stead but the typed client: the browser holds no runtime code", () => {
    const c = importGraph(join(ROOT, "console", "src"));
    expect(c.files.length).toBeGreaterThan(5);
    const outside = c.edges.filter((e) => e.to.startsWith(".."));
    expect(outside.length).toBeGreaterThan(0);
    expect(outside.filter((e) => !e.to.startsWith("../../src/client/")).map(edgeText)).toEqual([]);
  });

  it("the wire layer (src/client/api-types.ts) imports nothing and declares types only: importing it loads no code", () => {
    expect(graph.edges.filter((e) => e.from === WIRE_FILE).map(edgeText)).toEqual([]);
    const text = readFileSync(join(ROOT, "src", WIRE_FILE), "utf8");
    const declarations = [...text.matchAll(/^export (\w+)/gm)].map((m) => m[1]);
    expect(declarations.length).toBeGreaterThan(20);
    expect(declarations.filter((d) => d !== "type" && d !== "interface")).toEqual([]);
    expect(text).not.toMatch(/^(?:import|const|let|var|function|class|enum)\b/m);
  });

  it("every file under src/ belongs to a layer (a new folder is added to MAY_IMPORT first)", () => {
    expect(graph.files.filter((f) => layerOf(f) === undefined)).toEqual([]);
    expect(graph.files.length).toBeGreaterThan(50);
  });

  it("no layer imports one above it (docs/ARCHITECTURE.md, Layers)", () => {
    const upward = graph.edges.filter((e) => {
      const from = layerOf(e.from);
      const to = layerOf(e.to);
      return from !== undefined && to !== undefined && from !== to && !MAY_IMPORT[from].includes(to);
    });
    expect([...new Set(upward.map(edgeText))].sort()).toEqual([]);
  });

  it("a skin (cli/, server/) imports nothing of store/ but its records", () => {
    const reaching = graph.edges.filter((e) => skinFiles.includes(e.from) && layerOf(e.to) === "store" && !SKIN_MAY_IMPORT_FROM_STORE.includes(e.to));
    expect([...new Set(reaching.map(edgeText))].sort()).toEqual([]);
  });

  it("a skin (cli/, server/) never holds the store: no `stead.store`, no store handed to a helper, by the type checker", () => {
    expect(skinFiles.length).toBeGreaterThan(5);
    expect(storeReachesIn("src/")).toEqual([]);
  });

  it("no import cycles, type imports included, beyond the listed ones", () => {
    expect(cycles(graph.files, graph.edges)).toEqual(ALLOWED_CYCLES);
  });

  it("no runtime import cycles beyond the listed ones", () => {
    expect(cycles(graph.files, graph.edges.filter((e) => !e.typeOnly))).toEqual(ALLOWED_RUNTIME_CYCLES);
  });

  it("every file in bench/ is reached from bench/run.ts: an experiment becomes a benchmark or goes", () => {
    const bench = importGraph(join(ROOT, "bench"));
    const reached = new Set(["run.ts"]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const e of bench.edges) {
        if (reached.has(e.from) && !reached.has(e.to) && bench.files.includes(e.to)) {
          reached.add(e.to);
          grew = true;
        }
      }
    }
    expect(bench.files.filter((f) => !reached.has(f))).toEqual([]);
  });

  it("finds a skin's hold on the store however it is spelled, and not the facade's plain data", () => {
    expect(storeReachesIn(REACHING_FIXTURE).map((r) => r.slice(REACHING_FIXTURE.length + 1))).toEqual([
      "4: stead.store",
      '5: stead["store"]',
      "7: store: s",
      "10: stead.store",
      "11: handOver(stead).listRuns",
    ]);
  });

  it("finds an upward import, a cycle and a runtime cycle when there is one", () => {
    const files = ["store/a.ts", "engine/b.ts", "engine/c.ts"];
    const edges: ImportEdge[] = [
      { from: "store/a.ts", to: "engine/b.ts", typeOnly: true },
      { from: "engine/b.ts", to: "store/a.ts", typeOnly: false },
      { from: "engine/b.ts", to: "engine/c.ts", typeOnly: false },
    ];
    expect(cycles(files, edges)).toEqual([["engine/b.ts", "store/a.ts"]]);
    expect(cycles(files, edges.filter((e) => !e.typeOnly))).toEqual([]);
    expect(MAY_IMPORT.store.includes(layerOf("engine/b.ts") as Layer)).toBe(false);
  });
});

describe("docs/ARCHITECTURE.md's folder list", () => {
  /** The layout block: from the first line naming a folder of src/ to src/index.ts's line. */
  const text = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
  const block = text.slice(text.indexOf("\nsrc/"), text.indexOf("\nsrc/index.ts"));
  const named = [...block.matchAll(/^src\/([\w-]+(?:\/[\w-]+)*)\//gm)].map((m) => m[1]);
  const folders = (dir: string): string[] =>
    readdirSync(join(ROOT, "src", dir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => (dir ? `${dir}/${e.name}` : e.name));

  it("names every folder of src/ at its line's start, and none that is gone", () => {
    expect(named.length).toBeGreaterThan(5);
    expect(folders("").filter((f) => !named.includes(f))).toEqual([]);
    expect(named.filter((f) => f !== undefined && !existsSync(join(ROOT, "src", f)))).toEqual([]);
  });

  it("mentions each folder one level down as `name/` in the layout", () => {
    const nested = folders("").flatMap((f) => folders(f));
    expect(nested.filter((f) => !block.includes(`${f.split("/")[1] ?? ""}/`))).toEqual([]);
  });
});
