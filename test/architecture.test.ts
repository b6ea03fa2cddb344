/**
 * The layers of docs/ARCHITECTURE.md, checked on src/: no file imports a layer above its own, and
 * no files import each other in a circle. Type-only imports count for both: a type is part of a
 * layer's API, and a circle made only of types still says a type lives in the wrong file.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, importGraph, type ImportEdge } from "./helpers/import-graph.js";
import { ROOT } from "./cli-helpers.js";

type Layer = "shared" | "store" | "workspace" | "engine" | "agent" | "worker" | "root" | "cli" | "entry";

/** What each layer may import besides itself. agent and worker are siblings: neither imports the other. */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  shared: [],
  store: ["shared"],
  workspace: ["store", "shared"],
  engine: ["workspace", "store", "shared"],
  agent: ["engine", "workspace", "store", "shared"],
  worker: ["engine", "workspace", "store", "shared"],
  /** The composition root (src/create-stead.ts): joins the engine with the agent layer's rules. */
  root: ["agent", "worker", "engine", "workspace", "store", "shared"],
  cli: ["root", "agent", "worker", "engine", "workspace", "store", "shared"],
  entry: ["cli", "root", "agent", "worker", "engine", "workspace", "store", "shared"],
};

/** src/errors.ts and src/thrown.ts are below everything; the package entries (stead, stead/conformance) above everything. */
const TOP_FILES: Record<string, Layer> = { "errors.ts": "shared", "thrown.ts": "shared", "index.ts": "entry", "index.mts": "entry", "conformance.ts": "entry", "conformance.mts": "entry", "create-stead.ts": "root" };

function layerOf(file: string): Layer | undefined {
  const [first, ...rest] = file.split("/");
  if (first === undefined) return undefined;
  if (rest.length === 0) return TOP_FILES[first];
  return first in MAY_IMPORT && first !== "shared" && first !== "entry" && first !== "root" ? (first as Layer) : undefined;
}

/**
 * Upward imports there today, each `from -> to`. Strict: one that no longer exists fails too, so
 * the list only shrinks. The Stead class builds workers (`stead.worker()`, `run`, `follow`) and
 * reads worker presence for `why`: the composition root belongs above engine and worker.
 */
const ALLOWED_UPWARD: readonly string[] = [
  "engine/stead.ts -> worker/owner.ts",
  "engine/stead.ts -> worker/storage-guard.ts",
  "engine/stead.ts -> worker/worker.ts",
];

/**
 * Import cycles there today (strongly connected files, type imports counted), each sorted. Strict
 * like the list above: a cycle that shrank or went must be updated here; a new one fails.
 */
const ALLOWED_CYCLES: readonly (readonly string[])[] = [];

/** The cycles above that remain with type-only imports left out: these load a half-initialised module at run time. */
const ALLOWED_RUNTIME_CYCLES: readonly (readonly string[])[] = [];

const graph = importGraph(join(ROOT, "src"));
const edgeText = (e: ImportEdge) => `${e.from} -> ${e.to}`;

describe("architecture", () => {
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
    expect([...new Set(upward.map(edgeText))].sort()).toEqual([...ALLOWED_UPWARD].sort());
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
