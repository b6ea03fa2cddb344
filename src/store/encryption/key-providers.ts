/**
 * Key-encryption keys: what wraps an encrypted store's data keys. The store keeps data keys only
 * wrapped (data_keys); a provider holds the key that unwraps them, outside the store. Built in: a
 * key file, an environment variable, and the default key directory (one file per key, named by
 * its id). A KMS is one more provider: `wrap` and `unwrap` call it, the key never leaves it.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { SteadError } from "../../errors.js";
import { newKey, unwrapKey, wrapKey } from "./cipher.js";

export interface KeyProvider {
  /** The id of the key new data keys are wrapped by (recorded with each, so the right key is found to unwrap it). */
  readonly id: string;
  /** Whether it holds the key of this id (a KMS may hold its old versions too). */
  holds(kekId: string): boolean;
  wrap(dataKey: Buffer, context: string): Promise<string>;
  /** The data key; throws when `wrapped` was not wrapped by that key with that context. */
  unwrap(wrapped: string, kekId: string, context: string): Promise<Buffer>;
  /** Where the key lives, for messages (a path, an environment variable's name); never the key. */
  readonly where: string;
}

const KEY_FILE_HEADER = "stead-key-v1";

/** A key's id: a digest of it, so the same key always has the same id and an id gives nothing away. */
export const keyIdOf = (key: Buffer): string => "k" + createHash("sha256").update("stead key id\0").update(key).digest("hex").slice(0, 20);

/** A provider over one key held in this process. */
export function localKey(key: Buffer, where: string): KeyProvider {
  if (key.byteLength !== 32) {
    throw new SteadError("STEAD_KEY_WRONG", `the key in ${where} is ${key.byteLength} bytes, not 32`, { fix: "make a key with `stead keys init` (or 32 random bytes, base64)" });
  }
  const id = keyIdOf(key);
  return {
    id,
    where,
    holds: (kekId) => kekId === id,
    wrap: (dataKey, context) => Promise.resolve(wrapKey(key, dataKey, context)),
    unwrap: (wrapped, kekId, context) => Promise.resolve(unwrapKey(key, wrapped, context, kekId)),
  };
}

/** The text of a key file (`stead-key-v1 <base64>`, one line), or a bare base64 key. */
export function parseKey(text: string, where: string): Buffer {
  const parts = text.trim().split(/\s+/);
  const b64 = parts.length === 2 && parts[0] === KEY_FILE_HEADER ? parts[1] : parts.length === 1 ? parts[0] : undefined;
  const key = b64 !== undefined && /^[A-Za-z0-9+/_-]+={0,2}$/.test(b64) ? Buffer.from(b64, "base64") : undefined;
  if (!key || key.byteLength !== 32) {
    throw new SteadError("STEAD_KEY_WRONG", `${where} does not hold a Stead key (expected "${KEY_FILE_HEADER} <32 bytes, base64>" or 32 bytes in base64)`, {
      fix: "point at the key file `stead keys init` wrote, or give 32 random bytes in base64",
    });
  }
  return key;
}

/** Whether a key file other users may read (or in a directory they may write) is used anyway: the option given, else STEAD_ALLOW_READABLE_KEY_FILE=1. */
export interface KeyFileOptions {
  allowReadable?: boolean;
}

const allowReadable = (o: KeyFileOptions, env: NodeJS.ProcessEnv = process.env): boolean => o.allowReadable ?? env.STEAD_ALLOW_READABLE_KEY_FILE === "1";

/**
 * Refuses a key file its group or other users may read: anyone who can read it can read every
 * value of the store, and it is not the owner's alone to say who may. Refuses as well a key file
 * in a directory its group or other users may write (without the sticky bit, as /tmp has): they
 * can remove the key, or put another file in its place. (Windows keeps no such bits.)
 */
function refuseReadable(path: string, o: KeyFileOptions): void {
  if (process.platform === "win32" || allowReadable(o)) return;
  refuseWritableDir(dirname(path));
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st || (st.mode & 0o044) === 0) return;
  const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
  throw new SteadError("STEAD_KEY_EXPOSED", `the key file ${path} has mode ${mode}: ${(st.mode & 0o004) !== 0 ? "every user of this machine" : "its group"} may read it, and with it every value of the store`, {
    path,
    fix: `make it its owner's alone: chmod 600 ${path} (to use it as it is, set STEAD_ALLOW_READABLE_KEY_FILE=1)`,
  });
}

/** Refuses a key directory its group or other users may write, unless it is sticky (they may then remove only their own files). */
function refuseWritableDir(dir: string): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st || (st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0) return;
  const mode = (st.mode & 0o7777).toString(8).padStart(4, "0");
  throw new SteadError(
    "STEAD_KEY_EXPOSED",
    `the key directory ${dir} has mode ${mode}: ${(st.mode & 0o002) !== 0 ? "every user of this machine" : "its group"} may write it, and so remove a key in it or put another file in its place`,
    { path: dir, fix: `make it its owner's alone: chmod 700 ${dir} (to use it as it is, set STEAD_ALLOW_READABLE_KEY_FILE=1)` },
  );
}

export function keyFileProvider(path: string, options: KeyFileOptions = {}): KeyProvider {
  refuseReadable(path, options);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new SteadError("STEAD_KEY_MISSING", `cannot read the key file ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`, {
      fix: "restore the key file from where you backed it up, or point STEAD_ENCRYPTION_KEY_FILE at it",
    });
  }
  return localKey(parseKey(text, path), path);
}

export function envKeyProvider(name = "STEAD_ENCRYPTION_KEY", env: NodeJS.ProcessEnv = process.env): KeyProvider {
  const value = env[name];
  if (value === undefined || value === "") throw new SteadError("STEAD_KEY_MISSING", `${name} is not set`, { fix: `set ${name} to the store's key (32 bytes, base64)` });
  return localKey(parseKey(value, `$${name}`), `$${name}`);
}

/** Where keys are kept by default: STEAD_KEY_DIR, else ~/.config/stead/keys (XDG_CONFIG_HOME honoured). Never beside the store: a copy of the store carries no key. */
export function defaultKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STEAD_KEY_DIR) return env.STEAD_KEY_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "stead", "keys");
}

export const keyFileIn = (dir: string, kekId: string): string => join(dir, `${kekId}.key`);

/** Writes a new random key into `dir` (or at `path`), readable by its owner only; returns its provider. */
export function createKeyFile(options: { dir?: string; path?: string } & KeyFileOptions = {}): KeyProvider {
  const key = newKey();
  const path = options.path ?? keyFileIn(options.dir ?? defaultKeyDir(), keyIdOf(key));
  if (existsSync(path)) throw new SteadError("STEAD_BAD_PATH", `${path} exists already; a key file is never overwritten`, { fix: "choose another path, or use that key" });
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (process.platform !== "win32" && !allowReadable(options)) refuseWritableDir(dirname(path));
  writeFileSync(path, `${KEY_FILE_HEADER} ${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return localKey(key, path);
}

/**
 * Every key a store may need, in order: the one given (option, STEAD_ENCRYPTION_KEY,
 * STEAD_ENCRYPTION_KEY_FILE), then the key directory's file named by the id asked for.
 */
export class KeyChain {
  constructor(
    readonly given: KeyProvider | undefined,
    readonly dir: string = defaultKeyDir(),
    private readonly fileOptions: KeyFileOptions = {},
  ) {}

  /** The provider holding `kekId`, or undefined. */
  find(kekId: string): KeyProvider | undefined {
    if (this.given?.holds(kekId)) return this.given;
    const path = keyFileIn(this.dir, kekId);
    return existsSync(path) ? keyFileProvider(path, this.fileOptions) : undefined;
  }

  describe(): string {
    return [this.given ? this.given.where : undefined, `the key directory ${this.dir}`].filter((x) => x !== undefined).join(" and ");
  }
}

/** The key given by the environment (STEAD_ENCRYPTION_KEY, else STEAD_ENCRYPTION_KEY_FILE), if any. */
export function keyFromEnv(env: NodeJS.ProcessEnv = process.env, options: KeyFileOptions = {}): KeyProvider | undefined {
  if (env.STEAD_ENCRYPTION_KEY) return envKeyProvider("STEAD_ENCRYPTION_KEY", env);
  if (env.STEAD_ENCRYPTION_KEY_FILE) return keyFileProvider(env.STEAD_ENCRYPTION_KEY_FILE, options);
  return undefined;
}
