/**
 * A served store (served-store.ts) with a second listener behind a trusted proxy
 * (`trustProxy`): a request's client address is what its X-Forwarded-For says, so a test can
 * speak as many clients from one process. For the tests of guessing tokens.
 */
import { afterAll, beforeAll } from "vitest";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import type { StoreKind } from "./both-stores.js";
import { servedStore, type Served } from "./served-store.js";

/** What the server answered a request with a token. */
export interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | null;
}

/** A well-formed token no store holds, the i-th of a run of guesses. */
export const guess = (i: number) => `stead_${String(i).padStart(43, "G")}`;

/** How many answers had this status. */
export const count = (answers: readonly Answer[], status: number) => answers.filter((a) => a.status === status).length;

export interface ProxiedServer {
  readonly served: Served;
  readonly proxied: Listening;
  /** `GET /runs` from client address `from`, with `token`. */
  readonly runs: (from: string, token: string) => Promise<Answer>;
  /** A browser sign-in from `from`, exchanging `token` for a session. */
  readonly signIn: (from: string, token: string) => Promise<Answer>;
}

/** Starts the servers before the suite's tests (beforeAll) and closes them after (afterAll). */
export function proxiedServer(kind: StoreKind, label: string): ProxiedServer {
  let served: Served | undefined;
  let proxied: Listening | undefined;
  const started = () => {
    if (!served || !proxied) throw new Error("the proxied server is used before its suite started it");
    return { served, proxied };
  };
  const answer = async (res: Response): Promise<Answer> => {
    const body = (await res.json()) as { code?: string };
    return { status: res.status, code: body.code, retryAfter: res.headers.get("retry-after") };
  };
  beforeAll(async () => {
    served = await servedStore(kind, label);
    proxied = await listen({ stead: served.s.stead, authenticate: tokensOf(served.s.stead), port: 0, trustProxy: true, console: false });
  });
  afterAll(async () => {
    await proxied?.close(1_000);
    await served?.close();
  });
  return {
    get served() {
      return started().served;
    },
    get proxied() {
      return started().proxied;
    },
    runs: async (from, token) => answer(await fetch(`${started().proxied.url}/api/v1/runs`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from } })),
    signIn: async (from, token) =>
      answer(
        await fetch(`${started().proxied.url}/api/v1/auth/session`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": from },
          body: JSON.stringify({ token }),
        }),
      ),
  };
}
