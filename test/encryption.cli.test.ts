/**
 * `stead keys` from the shell: `init` encrypts a new store with a new key file in the key
 * directory (owner-only), a run through the CLI leaves its input nowhere in the store's files,
 * every command finds the key by itself; `status` names the keys, `rotate` moves them to a new
 * key file, after which the old one can go; without the key a command exits non-zero naming it;
 * and `init` on a store with runs is refused, leaving no key behind.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild } from "./cli-helpers.js";
import { tempDir } from "./helpers/temp-store.js";

const SEALED = join(FIXTURES, "sealed.ts");
const MARKER = "MARKER-cli-sealed-3b8e";

const storeText = (dir: string): string =>
  [join(dir, ".stead", "stead.db"), join(dir, ".stead", "stead.db-wal")]
    .filter(existsSync)
    .map((f) => readFileSync(f).toString("latin1"))
    .join("\n");

describe("stead keys", () => {
  const cleanups: (() => void)[] = [];
  beforeAll(() => requireBuild());
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it("init encrypts a new store; runs are sealed; status and rotate; without the key every command refuses", async () => {
    const work = tempDir("stead-keys-cli");
    const keys = tempDir("stead-keys-dir");
    cleanups.push(work.remove, keys.remove);
    const env = { STEAD_KEY_DIR: keys.dir };

    const init = await cli(["keys", "init", "--json"], work.dir, { env });
    expect(init.code, init.stderr).toBe(0);
    const made = JSON.parse(init.stdout) as { kekId: string; keyFile: string };
    expect(made.keyFile).toBe(join(keys.dir, `${made.kekId}.key`));
    expect(statSync(made.keyFile).mode & 0o777).toBe(0o600);

    const run = await cli(["run", SEALED, "--input", JSON.stringify({ note: MARKER }), "--id", "s-1"], work.dir, { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(MARKER);
    expect(storeText(work.dir).includes(MARKER)).toBe(false);

    const status = JSON.parse((await cli(["keys", "status", "--json"], work.dir, { env })).stdout) as { encrypted: boolean; keys: { kekId: string; heldBy: string | null }[] };
    expect(status.encrypted).toBe(true);
    expect(status.keys.map((k) => [k.kekId, k.heldBy])).toEqual([
      [made.kekId, made.keyFile],
      [made.kekId, made.keyFile],
    ]);

    const rotated = await cli(["keys", "rotate", "--json"], work.dir, { env });
    expect(rotated.code, rotated.stderr).toBe(0);
    const next = JSON.parse(rotated.stdout) as { kekId: string; keyFile: string };
    expect(next.kekId).not.toBe(made.kekId);
    rmSync(made.keyFile);
    const shown = await cli(["status", "s-1", "--json"], work.dir, { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(MARKER);

    rmSync(next.keyFile);
    const refused = await cli(["status", "s-1"], work.dir, { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("never opens without it");
    expect(refused.stderr).toContain(next.kekId);
    expect(refused.stdout).not.toContain(MARKER);
  }, 90_000);

  it("init on a store that holds runs is refused, and leaves no key file", async () => {
    const work = tempDir("stead-keys-plain");
    const keys = tempDir("stead-keys-dir2");
    cleanups.push(work.remove, keys.remove);
    const env = { STEAD_KEY_DIR: keys.dir };
    expect((await cli(["run", SEALED, "--input", JSON.stringify({ note: "plain" }), "--id", "p-1"], work.dir, { env })).code).toBe(0);
    const init = await cli(["keys", "init"], work.dir, { env });
    expect(init.code).not.toBe(0);
    expect(init.stderr).toContain("already holds runs in plain text");
    expect(readdirSync(keys.dir)).toEqual([]);
    expect((await cli(["status", "p-1", "--json"], work.dir, { env })).stdout).toContain("plain");
  }, 60_000);
});
