/**
 * Ignore rules as git applies them: the workspace's own exclude patterns at the root, then each
 * directory's `.gitignore`, a deeper file taking precedence over a shallower one. A directory that
 * is ignored is never entered, so nothing under it can be re-included (as in git).
 */
import ignore, { type Ignore } from "ignore";

interface Level {
  /** Directory of the rules, relative to the workspace root ("" for the root). */
  dir: string;
  rules: Ignore;
}

export class IgnoreRules {
  private constructor(private readonly levels: readonly Level[]) {}

  /** The workspace root's rules: the configured exclude patterns. */
  static root(exclude: readonly string[]): IgnoreRules {
    return new IgnoreRules(exclude.length ? [{ dir: "", rules: ignore().add([...exclude]) }] : []);
  }

  /** These rules plus a `.gitignore` found in directory `dir` (relative to the root). */
  withGitignore(dir: string, text: string): IgnoreRules {
    return new IgnoreRules([...this.levels, { dir, rules: ignore().add(text) }]);
  }

  /** Whether `path` (relative to the root, "/"-separated) is ignored; directories are tested as such. */
  ignores(path: string, isDir: boolean): boolean {
    let verdict = false;
    for (const level of this.levels) {
      const rel = level.dir === "" ? path : path.slice(level.dir.length + 1);
      const r = level.rules.test(isDir ? `${rel}/` : rel);
      if (r.ignored) verdict = true;
      else if (r.unignored) verdict = false;
    }
    return verdict;
  }
}
