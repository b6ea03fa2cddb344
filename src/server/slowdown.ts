/**
 * Guessing tokens costs time, per client: an IPv4 address, or an IPv6 /64, however written
 * (client-of.ts). A bad token (a bearer header, or the body of a sign-in) is answered ever more
 * slowly: the second within the window after 100 ms, doubling, at most 5 s. And while a client has
 * a bad token on record (within WINDOW_MS of its last), it has at most MAX_IN_FLIGHT requests with a
 * token in flight (being verified or slowed down): more are refused at once, 429
 * `STEAD_TOO_MANY_BAD_TOKENS` with Retry-After, before their token is read. So once its wait is
 * 5 s, at most MAX_IN_FLIGHT of its tokens are read per 5 s however its guesses are timed. A
 * refusal says nothing of the token it carried (it was never verified; one verified and found bad
 * past the bound is refused alike).
 *
 * The bound keys on failures on record, not on one being slowed down now: that would lapse
 * between rounds of slowed guesses, and a burst then would be read whole until the first of it
 * was found bad, as many as arrive in one round trip of the store.
 *
 * A valid token does not forget the client's failures (a guesser holding one token would reset
 * the count between rounds); they are forgotten WINDOW_MS after the last. The price: everyone
 * behind one client (a NAT, a proxy without `--trust-proxy`, one /64) shares the bound while a bad
 * token from there is on record. A client with no bad token on record is not limited: parallel
 * callers with valid tokens meet the bound only where their client sent a bad token within
 * WINDOW_MS, and a client's first burst is read whole until its first bad token is answered.
 *
 * Bounded: at most MAX_CLIENTS are remembered, the least recently seen dropped first (a request in
 * flight keeps counting on the entry it took). Hazard: one who can send from MAX_CLIENTS clients
 * (addresses, or /64s) can push an entry out and start it afresh.
 */
import { setTimeout as delay } from "node:timers/promises";
import { SteadError } from "../errors.js";
import { clientOf } from "./client-of.js";

const BASE_MS = 100;
const MAX_MS = 5_000;
const MAX_CLIENTS = 10_000;
/** Failures older than this are forgotten. */
const WINDOW_MS = 15 * 60_000;
/** Requests with a token one client may have in flight while a bad token from it is on record. */
export const MAX_IN_FLIGHT = 4;

interface ClientState {
  /** Bad tokens within the window, and when the last came. */
  count: number;
  last: number;
  /** Requests with a token being verified now. */
  verifying: number;
  /** Requests with a bad token being slowed down now. */
  slowed: number;
}

/** A request with a token, admitted to be verified: settle it with `release` or `failed`, once. */
export interface Admission {
  readonly client: string;
  readonly state: ClientState;
}

const delayOf = (count: number): number => (count > 1 ? Math.min(MAX_MS, BASE_MS * 2 ** (count - 2)) : 0);

export class BadTokenSlowdown {
  private readonly clients = new Map<string, ClientState>();

  /** Before a token from `address` is read: refused (429) while its client is over the bound. */
  admit(address: string, now = Date.now()): Admission {
    const client = clientOf(address);
    const state = this.stateOf(client, now);
    if ((state.count > 0 || state.slowed > 0) && state.verifying + state.slowed >= MAX_IN_FLIGHT) throw tooMany(state);
    state.verifying++;
    return { client, state };
  }

  /** The admitted token was valid (or could not be verified: the store failed). The client's failures stand. */
  release(a: Admission): void {
    a.state.verifying--;
    this.forgetIfIdle(a.client, a.state);
  }

  /**
   * The admitted token was bad: waits as long as the client's failures ask, then resolves (the
   * caller refuses it 401). Over the bound, refused (429) at once instead of waiting.
   */
  async failed(a: Admission, now = Date.now()): Promise<void> {
    const s = a.state;
    s.verifying--;
    s.count = now - s.last < WINDOW_MS ? s.count + 1 : 1;
    s.last = now;
    this.remember(a.client, s);
    const wait = delayOf(s.count);
    if (wait === 0) return;
    if (s.slowed >= MAX_IN_FLIGHT) throw tooMany(s);
    s.slowed++;
    try {
      await delay(wait);
    } finally {
      s.slowed--;
    }
  }

  /** The recent failures remembered for the client `address` stands for (0: none). */
  failuresOf(address: string, now = Date.now()): number {
    const s = this.clients.get(clientOf(address));
    return s && now - s.last < WINDOW_MS ? s.count : 0;
  }

  private stateOf(client: string, now: number): ClientState {
    const s = this.clients.get(client);
    if (s) {
      if (s.count > 0 && now - s.last >= WINDOW_MS) s.count = 0;
      return s;
    }
    const fresh: ClientState = { count: 0, last: 0, verifying: 0, slowed: 0 };
    this.remember(client, fresh);
    return fresh;
  }

  /** Most recently seen last; the least recently seen dropped past MAX_CLIENTS. */
  private remember(client: string, s: ClientState): void {
    this.clients.delete(client);
    this.clients.set(client, s);
    if (this.clients.size > MAX_CLIENTS) {
      const oldest = this.clients.keys().next().value;
      if (oldest !== undefined) this.clients.delete(oldest);
    }
  }

  /** A client with no failures and nothing in flight need not be remembered. */
  private forgetIfIdle(client: string, s: ClientState): void {
    if (s.count === 0 && s.verifying === 0 && s.slowed === 0 && this.clients.get(client) === s) this.clients.delete(client);
  }
}

function tooMany(s: ClientState): SteadError {
  const retryAfterS = Math.max(1, Math.ceil(delayOf(s.count + 1) / 1000));
  return new SteadError("STEAD_TOO_MANY_BAD_TOKENS", "too many requests with a token from this client address while a bad token from it is on record", {
    fix: `retry after ${retryAfterS} s with a live token (\`stead tokens list\`)`,
    retryAfterS,
  });
}
