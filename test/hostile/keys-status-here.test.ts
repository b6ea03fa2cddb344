/**
 * Issue 39, "also found": `stead keys status` reports whether this machine holds the store's key,
 * as the operations guide says, instead of refusing where it does not: through the real CLI, on a machine
 * without the key it exits 0, names the key it lacks and says what to do, and reads nothing else
 * of the store; with the key it says the key is held. (The CLI's store is SQLite; what status reads,
 * the key rows, is the same on both stores.)
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild } from "../cli-helpers.js";
import { tempDir } from "../helpers/temp-store.js";

const SEALED = join(FIXTURES, "sealed.ts");
const MARKER = "MARKER-keys-status-5e02";

interface Status {
  encrypted: boolean;
  held: boolean;
  keys: { id: string; kekId: string; heldBy: string | null }[];
}

describe("stead keys status on a machine without the key", () => {
  const cleanups: (() => void)[] = [];
  beforeAll(() => requireBuild());
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it("reports that the key is not held here and what to do, exit 0; with the key, that it is", async () => {
    const work = tempDir("stead-ks-work");
    const keys = tempDir("stead-ks-keys");
    const elsewhere = tempDir("stead-ks-elsewhere");
    cleanups.push(work.remove, keys.remove, elsewhere.remove);
    const init = await cli(["keys", "init", "--json"], work.dir, { env: { STEAD_KEY_DIR: keys.dir } });
    expect(init.code, init.stderr).toBe(0);
    const { kekId } = JSON.parse(init.stdout) as { kekId: string };
    expect((await cli(["run", SEALED, "--input", JSON.stringify({ note: MARKER }), "--id", "k-1"], work.dir, { env: { STEAD_KEY_DIR: keys.dir } })).code).toBe(0);
    const db = join(work.dir, ".stead", "stead.db");
    const before = readFileSync(db);

    const text = await cli(["keys", "status"], work.dir, { env: { STEAD_KEY_DIR: elsewhere.dir } });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("encrypted");
    expect(text.stdout).toContain(`does not hold key ${kekId}`);
    expect(text.stdout).toContain(join(elsewhere.dir, `${kekId}.key`));
    expect(text.stdout).toContain("STEAD_ENCRYPTION_KEY_FILE");
    expect(text.stdout + text.stderr).not.toContain(MARKER);

    const json = await cli(["keys", "status", "--json"], work.dir, { env: { STEAD_KEY_DIR: elsewhere.dir } });
    expect(json.code, json.stderr).toBe(0);
    const away = JSON.parse(json.stdout) as Status;
    expect(away).toMatchObject({ encrypted: true, held: false });
    expect(away.keys.length).toBeGreaterThan(0);
    for (const k of away.keys) expect(k).toMatchObject({ kekId, heldBy: null });

    const here = JSON.parse((await cli(["keys", "status", "--json"], work.dir, { env: { STEAD_KEY_DIR: keys.dir } })).stdout) as Status;
    expect(here).toMatchObject({ encrypted: true, held: true });
    for (const k of here.keys) expect(k.heldBy).toBe(join(keys.dir, `${kekId}.key`));
    const heldText = await cli(["keys", "status"], work.dir, { env: { STEAD_KEY_DIR: keys.dir } });
    expect(heldText.stdout).toContain(`this machine holds key ${kekId}`);

    // Nothing was written by a status (a reader may leave an empty WAL behind, never a frame).
    expect(readFileSync(db).equals(before)).toBe(true);
    if (existsSync(`${db}-wal`)) expect(readFileSync(`${db}-wal`).byteLength).toBe(0);
  }, 90_000);
});
