/**
 * The conformance suite over the layered store Stead itself uses: redaction over encryption over
 * SQLite (stead.ts composes them so), with a data key. Every port must behave the same through
 * the layers as on the bare store; the three concerns left out differ by design and say why.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { Redactor } from "../src/redaction/redactor.js";
import { describeStoreConformance, type StoreFactory } from "../src/store/conformance/index.js";
import { encryptingStore } from "../src/store/encryption/encrypting-store.js";
import { localKey } from "../src/store/encryption/key-providers.js";
import { redactingStore } from "../src/store/redacting-store.js";
import { SqliteStore } from "../src/store/sqlite/index.js";
import type { Store } from "../src/store/types.js";
import { keyChainFor } from "../src/stead/stead.js";
import { tempDir, tempStorePath } from "./helpers/temp-store.js";

const key = randomBytes(32);
const keyDir = tempDir("stead-layered-keys-");
afterAll(() => keyDir.remove());
const chain = () => keyChainFor({ key: localKey(key, "the test's key"), keyDir: keyDir.dir });

/** A layered store over the SQLite file at `path`, as createStead composes it. */
async function layered(path: string, create: boolean): Promise<Store> {
  const store = redactingStore(encryptingStore(new SqliteStore({ path, create }), chain(), { setUp: create }), Redactor.from({}));
  await store.migrate();
  return store;
}

const files = new Map<Store, ReturnType<typeof tempStorePath>>();

const factory: StoreFactory = {
  name: "redacting(encrypting(sqlite))",
  inProcessWakeups: true,
  async open() {
    const t = tempStorePath();
    const store = await layered(t.path, true);
    files.set(store, t);
    return store;
  },
  reopen: (store) => layered(store.location, false),
  async dispose(store) {
    await store.close();
    files.get(store)?.remove();
    files.delete(store);
  },
};

describeStoreConformance(
  factory,
  { describe, it, expect, beforeEach, afterEach },
  {
    skip: {
      "snapshots-blobs": "an encrypted store keeps a snapshot's root as a keyed address and lists blobs by their keyed address, not their content hash (test/encryption.test.ts covers both)",
      "data-keys": "an encrypted store holds its own data key from the start",
      "transfer-rows": "rows pass sealed as stored: a dump of an encrypted store holds them sealed, and plain rows written into one are refused as tampered (test/hostile/signed-dumps.test.ts)",
    },
  },
);

describe("conformance filters", () => {
  /** What the suite registers, through an API that only records titles. */
  function registered(filters: Parameters<typeof describeStoreConformance>[2]): string[] {
    const titles: string[] = [];
    const record = (name: string) => void titles.push(name);
    const api = {
      describe: (name: string, fn: () => void) => {
        titles.push(`describe ${name}`);
        fn();
      },
      it: Object.assign(record, { skip: (name: string) => void titles.push(`skip ${name}`) }),
      expect,
      beforeEach: () => undefined,
      afterEach: () => undefined,
    };
    describeStoreConformance(factory, api, filters);
    return titles;
  }

  it("runs only the concerns named, skips others with their reason, and refuses a name that is no concern", () => {
    const all = registered({});
    const tokensOnly = registered({ only: ["tokens"] });
    expect(tokensOnly.filter((t) => t.startsWith("describe ")).slice(1)).toEqual(["describe tokens"]);
    expect(tokensOnly.length).toBeLessThan(all.length / 5);
    expect(registered({ skip: { tokens: "not mine" } })).toContain("skip tokens: skipped (not mine)");
    expect(() => registered({ only: ["token" as never] })).toThrow(/name no concern "token": the concerns are lifecycle, runs/);
  });
});
