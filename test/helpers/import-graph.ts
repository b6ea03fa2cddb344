import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** One relative import of a source file: the file it names, and whether it is erased at compile time. */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(m?ts|tsx)$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

/** `./x.js` → `x.ts`, `./x.mjs` → `x.mts`, as the NodeNext sources spell their imports. */
function target(fromFile: string, spec: string): string {
  return resolve(dirname(fromFile), spec).replace(/\.(m?)js$/, (_m, m: string) => `.${m}ts`);
}

/**
 * Every relative import of the files under `root` (paths relative to it): static imports and
 * re-exports, dynamic `import()`, and `import("…")` types. `typeOnly` is what the syntax says
 * (`import type`, `export type`, every specifier marked `type`, an import type); an import whose
 * names are only used as types is erased too, but counted as runtime here.
 */
export function importGraph(root: string): { files: string[]; edges: ImportEdge[] } {
  const files = sourceFiles(root);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const add = (spec: string, typeOnly: boolean) => {
      if (spec.startsWith(".")) edges.push({ from: relative(root, file), to: relative(root, target(file, spec)), typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const c = node.importClause;
        const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
        const allTyped = !!named && named.length > 0 && !c?.name && named.every((s) => s.isTypeOnly);
        add(node.moduleSpecifier.text, !!c && (c.isTypeOnly || allTyped));
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
        add(node.moduleSpecifier.text, node.isTypeOnly || (!!named && named.length > 0 && named.every((s) => s.isTypeOnly)));
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        if (arg && ts.isStringLiteral(arg)) add(arg.text, false);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        add(node.argument.literal.text, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { files: files.map((f) => relative(root, f)), edges };
}

/** The strongly connected components of more than one file (each an import cycle), files sorted, by first file. */
export function cycles(files: readonly string[], edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) if (e.from !== e.to) next.get(e.from)?.push(e.to);
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      for (;;) {
        const w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
        if (w === v) break;
      }
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) connect(f);
  return out.sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""));
}
