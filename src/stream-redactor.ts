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

/** The longest tail a stream holds back before it redacts all of it. */
export const STREAM_HOLD_LIMIT = 512;

/** A swallowed candidate is kept to judge where it ends up to this length; past it, the stream lets nothing more out. */
const SWALLOW_LIMIT = 64 * 1024;

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
const CONTEXT = 16;

export class StreamRedactor implements StreamRedaction {
  private held = "";
  /** The end of the raw text already let out (see CONTEXT). */
  private before = "";
  /** A candidate past the limit, already shown as one marker: what follows is hidden while it continues it. */
  private swallowing = false;
  /** Past SWALLOW_LIMIT: nothing more is let out until the stream ends. */
  private sealed = false;

  constructor(
    private readonly redactor: Redactor,
    private readonly limit = STREAM_HOLD_LIMIT,
  ) {}

  push(text: string): string {
    if (this.sealed) return "";
    let buf = this.held + text;
    if (this.swallowing) {
      const end = this.candidateEnd(buf);
      if (end === undefined) {
        if (buf.length > SWALLOW_LIMIT) {
          this.sealed = true;
          this.held = "";
        } else this.held = buf;
        return "";
      }
      this.swallowing = false;
      this.before = buf.slice(Math.max(0, end - CONTEXT), end);
      buf = buf.slice(end);
    }
    const tail = this.redactor.undecided(buf, this.before);
    const cut = tail?.at ?? buf.length;
    let out = this.redactor.plain(buf.slice(0, cut), this.before).text;
    this.before = (this.before + buf.slice(0, cut)).slice(-CONTEXT);
    this.held = buf.slice(cut);
    if (tail && this.held.length > this.limit) {
      out += `[redacted:${tail.rule}]`;
      this.swallowing = true;
    }
    return out;
  }

  end(options: { cutOff?: boolean } = {}): string {
    let rest = "";
    if (!this.swallowing && !this.sealed) {
      // Cut off, a held candidate will never be finished: it may be the first part of a secret.
      const cut = options.cutOff ? this.redactor.unfinished(this.held, this.before) : undefined;
      if (cut) rest = `${this.redactor.plain(this.held.slice(0, cut.at), this.before).text}[redacted:${cut.rule}]`;
      else rest = this.redactor.plain(this.held, this.before).text;
    }
    this.held = "";
    this.before = "";
    this.swallowing = false;
    this.sealed = false;
    return rest;
  }

  /**
   * Where the swallowed candidate at the start of `buf` ends: undefined while it still runs to
   * the end; else the longest of its still-open beginning and any match that starts with it.
   */
  private candidateEnd(buf: string): number | undefined {
    if (this.redactor.undecided(buf, this.before)?.at === 0) return undefined;
    let open = this.held.length;
    while (open < buf.length && this.redactor.undecided(buf.slice(0, open + 1), this.before)?.at === 0) open++;
    let end = open;
    for (const s of this.redactor.spans(buf, this.before)) if (s.from === 0 && s.to > end) end = s.to;
    return end;
  }
}
