/** What a workspace scan looks at: ignore rules and the per-file size ceiling. */

/**
 * Never captured, at any depth: version-control internals, installed dependencies, Stead's own
 * store directory, and caches that tools rebuild.
 */
export const DEFAULT_EXCLUDES: readonly string[] = [
  ".git",
  ".hg",
  ".svn",
  "node_modules",
  ".stead",
  ".cache",
  "__pycache__",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".tox",
  ".turbo",
  ".parcel-cache",
  ".next",
  ".nuxt",
  ".gradle",
];

export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** How long `gcWorkspaces` spares an unreferenced blob after it was written: a capture in flight has written blobs its snapshot does not yet name. */
export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

/**
 * Files that by convention hold credentials: never captured unless `skipSecretFiles: false`, and
 * listed in the snapshot's notes as skipped (so a restore leaves them as they are on disk).
 * `.env.example`, `.env.sample` and `.env.template` are kept: they are written to be shared.
 */
const SECRET_FILE = /^(?:\.env(?:\.(?!(?:example|sample|template)$)[^/]+)?|\.envrc|\.netrc|\.npmrc|\.pypirc|\.pgpass|\.git-credentials|id_(?:rsa|dsa|ecdsa|ed25519)|[^/]+\.(?:pem|key|p12|pfx))$/;

export function isSecretFile(name: string): boolean {
  return SECRET_FILE.test(name);
}

export interface ScanOptions {
  /** Extra gitignore-style patterns, relative to the workspace root. */
  exclude?: readonly string[];
  /** Apply {@link DEFAULT_EXCLUDES}. Default true. */
  defaultExcludes?: boolean;
  /** Honour `.gitignore` files at every level. Default true. */
  gitignore?: boolean;
  /** Files larger than this are skipped with a note (never silently). Default 10 MB. */
  maxFileBytes?: number;
  /** Skip files that by convention hold credentials (`.env`, `.env.*`, `.npmrc`, `*.pem`, `id_rsa`…), with a note. Default true. */
  skipSecretFiles?: boolean;
}

export interface ResolvedScanOptions {
  exclude: readonly string[];
  gitignore: boolean;
  maxFileBytes: number;
  skipSecretFiles: boolean;
}

export function resolveScanOptions(o: ScanOptions = {}): ResolvedScanOptions {
  return {
    exclude: [...((o.defaultExcludes ?? true) ? DEFAULT_EXCLUDES : []), ...(o.exclude ?? [])],
    gitignore: o.gitignore ?? true,
    maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    skipSecretFiles: o.skipSecretFiles ?? true,
  };
}
