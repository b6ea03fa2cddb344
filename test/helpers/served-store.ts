/**
 * A Stead on a real store served over HTTP on 127.0.0.1 (a real `listen()`), with two real tokens
 * of its own (an operator's and a viewer's) and a side-effect log file beside it.
 */
import { join } from "node:path";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening, type ListenOptions } from "../../src/server/listen.js";
import { onStore, type OnStore, type StoreKind } from "./both-stores.js";
import { tempDir } from "./temp-store.js";

export interface Served {
  s: OnStore;
  server: Listening;
  /** A file the test's workflows append their effects to. */
  log: string;
  /** The secrets of the operator "olivia" and the viewer "victor". */
  tokens: { operator: string; viewer: string };
  close(): Promise<void>;
}

export async function servedStore(kind: StoreKind, label: string, options: Pick<ListenOptions, "streams"> = {}): Promise<Served> {
  const s = await onStore(kind, label);
  const d = tempDir(`stead-${label}-`);
  const tokens = {
    operator: (await s.stead.tokens.create({ name: "olivia", role: "operator" })).token,
    viewer: (await s.stead.tokens.create({ name: "victor", role: "viewer" })).token,
  };
  const server = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: 0, maxBodyBytes: 64 * 1024, ...options });
  return {
    s,
    server,
    log: join(d.dir, "effects.log"),
    tokens,
    async close() {
      await server.close(1_000);
      await s.cleanup();
      d.remove();
    },
  };
}
