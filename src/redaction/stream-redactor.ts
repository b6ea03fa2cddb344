/**
 * Text that arrives in pieces (a model call's live text) redacted as one text, before any piece
 * is written or shown. Each piece alone would hide a secret split across two of them (`Bearer`
 * in one, the token in the next; a key cut after ten characters), so the stream holds back the
 * tail that could still be the beginning of a match (redactor.ts `undecided`) and lets out the
 * rest, redacted.
 *
 * Invariant: while no held tail outgrows the limit, what the pieces let out, joined, is exactly
 * the redaction of the whole text (a follower's live text is a prefix of the journaled answer).
 * A tail held longer than the limit (a long candidate: a private key, a JWT) is let out as one
 * `[redacted:<rule>]` at once, and the stream then swallows what follows while it still
 * continues that candidate: more is hidden than the whole text's redaction would, never less.
 */
import type { Redactor } from "./redactor.js";
import { WORD_CONTEXT } from "./secret-patterns.js";

/** The longest tail a stream holds back before it redacts all of it. */
export const STREAM_HOLD_LIMIT = 512;

/** What a text stream offers its writer: each piece in, what may be shown now out. */
export interface StreamRedaction {
  /** The part of the text so far that is decided, redacted (maybe empty). */
  push(text: string): string;
  /**
   * The rest, redacted: the stream ended, or was cut off (`cutOff`: a held candidate of a few
   * characters or more is then hidden whole, since nothing will finish it). The stream is empty
   * afterwards.
   */
  end(options?: { cutOff?: boolean }): string;
}

/** Lets every piece out as it is: nothing is redacted. */
export const UNREDACTED_STREAM: StreamRedaction = { push: (text) => text, end: () => "" };

/** How much of the text already let out a stream keeps, to tell whether what follows starts a word. */
const CONTEXT = WORD_CONTEXT;

/** The end of a private key block, and what else ends one cut short (another block, a quote). */
const PEM_CLOSE = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|-----BEGIN |"/;
/** The longest text PEM_CLOSE matches, less one: how much of a swallowed block's end to keep in view. */
const PEM_CLOSE_REACH = 96;

/**
 * A candidate past the limit, shown already as one marker: what follows is hidden while it still
 * continues the candidate. `ends` reads only the text that came since (one read per piece, however
 * small the pieces), and answers where in it the candidate ended, or undefined while it goes on.
 */
interface Swallowed {
  ends(text: string): number | undefined;
}

/** A configured value, as far as its text goes on. */
function swallowedLiteral(value: string, consumed: number): Swallowed {
  let at = consumed;
  return {
    ends(text) {
      for (let i = 0; i < text.length; i++, at++) if (at >= value.length || text[i] !== value[at]) return i;
      return at >= value.length ? text.length : undefined;
    },
  };
}

/** A private key block, to its END line (or another block, or a quote). */
function swallowedBlock(): Swallowed {
  let seen = "";
  return {
    ends(text) {
      const view = seen + text;
      const m = PEM_CLOSE.exec(view);
      if (m) return Math.max(0, m.index + (m[0].startsWith("-----END") ? m[0].length : 0) - seen.length);
      seen = view.slice(-PEM_CLOSE_REACH);
      return undefined;
    },
  };
}

/** Any other shape: a token, to the first character no token is made of (a space, a quote, a bracket…). */
const swallowedToken: Swallowed = {
  ends(text) {
    const i = text.search(/[^A-Za-z0-9._~+/=%-]/);
    return i === -1 ? undefined : i;
  },
};

export class StreamRedactor implements StreamRedaction {
  private held = "";
  /** The end of the raw text already let out (see CONTEXT). */
  private before = "";
  private swallowed: Swallowed | undefined;

  constructor(
    private readonly redactor: Redactor,
    private readonly limit = STREAM_HOLD_LIMIT,
  ) {}

  push(text: string): string {
    let buf = this.held + text;
    if (this.swallowed) {
      const end = this.swallowed.ends(text);
      if (end === undefined) return "";
      this.swallowed = undefined;
      this.before = "";
      buf = text.slice(end);
    }
    const tail = this.redactor.undecided(buf, this.before);
    const cut = tail?.at ?? buf.length;
    let out = this.redactor.plain(buf.slice(0, cut), this.before).text;
    this.before = (this.before + buf.slice(0, cut)).slice(-CONTEXT);
    this.held = buf.slice(cut);
    if (tail && this.held.length > this.limit) {
      out += `[redacted:${tail.rule}]`;
      this.swallowed = tail.literal !== undefined && tail.literal.startsWith(this.held) ? swallowedLiteral(tail.literal, this.held.length) : tail.rule === "private-key" ? swallowedBlock() : swallowedToken;
      this.held = "";
    }
    return out;
  }

  end(options: { cutOff?: boolean } = {}): string {
    let rest = "";
    if (!this.swallowed) {
      // Cut off, a held candidate will never be finished: it may be the first part of a secret.
      const cut = options.cutOff ? this.redactor.unfinished(this.held, this.before) : undefined;
      if (cut) rest = `${this.redactor.plain(this.held.slice(0, cut.at), this.before).text}[redacted:${cut.rule}]`;
      else rest = this.redactor.plain(this.held, this.before).text;
    }
    this.held = "";
    this.before = "";
    this.swallowed = undefined;
    return rest;
  }
}
