import { dirname, join, relative, sep } from "node:path";
import ts from "typescript";

/**
 * The folders that declare store objects: the Store interface and its ports, and the stores that
 * implement them. A value whose type is declared there and can be called, or has methods, is a
 * handle on the store itself (or one of its methods); plain data declared there (StoreInfo) and
 * the records of records.ts and types.ts are not.
 */
const STORE_OBJECT_DIRS = ["ports", "sqlite", "postgres"].map((d) => join("src", "store", d) + sep);

function isStoreObject(type: ts.Type, root: string, checker: ts.TypeChecker): boolean {
  if (type.isUnionOrIntersection()) return type.types.some((t) => isStoreObject(t, root, checker));
  const symbol = type.aliasSymbol ?? type.getSymbol();
  const declared = (symbol?.declarations ?? []).some((d) => {
    const file = relative(root, d.getSourceFile().fileName);
    return STORE_OBJECT_DIRS.some((dir) => file.startsWith(dir));
  });
  if (!declared) return false;
  const callable = (t: ts.Type) => t.getCallSignatures().length > 0;
  return callable(type) || type.getProperties().some((p) => callable(checker.getTypeOfSymbol(p)));
}

/**
 * Where `files` hold a store object: every property read, element read, call and binding (a
 * destructured `{ store }`, a parameter, a variable) whose type is a store or one of its ports,
 * as `path:line: text` relative to `root`. Decided by the type checker, so a renamed variable,
 * `stead["store"]`, a destructuring or a helper that returns the store are all found.
 */
export function storeReaches(root: string, files: readonly string[]): string[] {
  const configPath = join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(configPath));
  const program = ts.createProgram({ rootNames: files.map((f) => join(root, f)), options: { ...options, noEmit: true } });
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const file of files) {
    const sf = program.getSourceFile(join(root, file));
    if (!sf) throw new Error(`${file} is not a source file of the program`);
    const visit = (node: ts.Node): void => {
      const holds =
        ts.isPropertyAccessExpression(node) ||
        ts.isElementAccessExpression(node) ||
        ts.isCallExpression(node) ||
        ts.isBindingElement(node) ||
        (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) ||
        (ts.isParameter(node) && ts.isIdentifier(node.name));
      if (holds && isStoreObject(checker.getTypeAtLocation(ts.isBindingElement(node) || ts.isVariableDeclaration(node) || ts.isParameter(node) ? node.name : node), root, checker)) {
        const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${file}:${line + 1}: ${node.getText().split("\n")[0]?.slice(0, 80) ?? ""}`);
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}
