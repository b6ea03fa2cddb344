/**
 * Where the well-known secret shapes (secret-patterns.ts) match in a text, and where one may be
 * still unfinished at its end, in time linear in the text: what the redactor and a stream's
 * redaction both read.
 *
 * Hazard: a shape's expression run over a whole text is tried at every position, and one that
 * scans a run from each (`sk-` repeated, each scanning the rest of the run) costs the square of
 * the run. A shape that needs a word start is therefore tried only where its anchor starts a word:
 * within a run of word characters no place but the first does, so each run is scanned once. The
 * other shapes scan a bounded stretch from each place (secret-patterns.ts).
 */
import { SECRET_PATTERNS, startsWord, WORD_CONTEXT, type SecretPattern } from "./secret-patterns.js";

export interface ShapeMatch {
  /** Where the match starts and ends in the text. */
  from: number;
  to: number;
  /** The part to replace: the `secret` group, else the whole match. */
  secretFrom: number;
  secretTo: number;
}

/** What a redaction leaves: a shape whose secret is one already is not redacted again. */
export const REDACTION_MARKER = /^\[redacted:[^\]]*\]$/;

/** Where an unfinished match may start at the end of a text without its anchor being whole yet: the longest anchor's length, with room. */
const PARTIAL_REACH = 32;

/** `startsWord` at `offset` of `text`, reading `before` as the text that precedes it (a stream's earlier pieces). */
export function wordStartAt(text: string, offset: number, before: string): boolean {
  if (before === "" || offset >= WORD_CONTEXT) return startsWord(text, offset);
  const context = before.slice(-WORD_CONTEXT);
  return startsWord(context + text.slice(0, offset), context.length + offset);
}

const LETTER = /[A-Za-z]/;

/** Whether `p` may start a match at `offset` of `text` (see `start`), reading `before` as what precedes it. */
function mayStart(p: SecretPattern, text: string, offset: number, before: string): boolean {
  if (p.start === "anywhere") return true;
  if (p.start === "word") return wordStartAt(text, offset, before);
  const prior = offset > 0 ? text[offset - 1] : before.at(-1);
  return prior === undefined || !LETTER.test(prior);
}

/** A match found, if it counts: its secret part passes the shape's check and is not a redaction already. */
function counted(p: SecretPattern, m: RegExpExecArray): ShapeMatch | undefined {
  const secret = m.groups?.secret;
  if (p.valid && !p.valid(secret ?? m[0])) return undefined;
  if (REDACTION_MARKER.test(secret ?? m[0])) return undefined;
  const span = m.indices?.groups?.secret;
  const from = m.index;
  const to = from + m[0].length;
  return span ? { from, to, secretFrom: span[0], secretTo: span[1] } : { from, to, secretFrom: from, secretTo: to };
}

/** The matches of `p` in `text`, left to right, never overlapping (a match that does not count still takes its place). */
export function matchesOf(text: string, p: SecretPattern, before = ""): ShapeMatch[] {
  const out: ShapeMatch[] = [];
  if (!p.anchor.test(text)) return out;
  if (p.start !== "word") {
    // Each place a match may start scans a bounded stretch (see secret-patterns.ts), so trying the next place after a refused start stays linear.
    const re = p.regex;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0 || !mayStart(p, text, m.index, before)) {
        re.lastIndex = m.index + 1;
        continue;
      }
      const found = counted(p, m);
      if (found) out.push(found);
    }
    return out;
  }
  const starts = p.starts;
  starts.lastIndex = 0;
  for (let a = starts.exec(text); a; a = starts.exec(text)) {
    const at = a.index;
    starts.lastIndex = at + 1;
    if (!mayStart(p, text, at, before)) continue;
    const re = p.at;
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) continue;
    const found = counted(p, m);
    if (found) out.push(found);
    starts.lastIndex = Math.max(at + 1, at + m[0].length);
  }
  return out;
}

/** The earliest position of `text` from which `p` may still be unfinished at its end (see `open`); `text.length` if none. */
export function openTail(text: string, p: SecretPattern, before = ""): number {
  if (p.start !== "word") {
    const re = p.open;
    re.lastIndex = 0;
    for (let m = re.exec(text); m && m.index < text.length; m = re.exec(text)) {
      if (mayStart(p, text, m.index, before)) return m.index;
      re.lastIndex = m.index + 1;
    }
    return text.length;
  }
  // Where a whole anchor stands, and near the end, where one may be only begun.
  const tail = Math.max(0, text.length - PARTIAL_REACH);
  const places: number[] = [];
  const starts = p.starts;
  starts.lastIndex = 0;
  for (let a = starts.exec(text); a && a.index < tail; a = starts.exec(text)) {
    starts.lastIndex = a.index + 1;
    places.push(a.index);
  }
  for (let i = tail; i < text.length; i++) places.push(i);
  for (const at of places) {
    if (!mayStart(p, text, at, before)) continue;
    const re = p.openAt;
    re.lastIndex = at;
    if (re.test(text)) return at;
  }
  return text.length;
}

/** Every pattern's matches in `text` as it stands, with its rule. */
export function shapeSpans(text: string, before = ""): { from: number; to: number; rule: string }[] {
  return SECRET_PATTERNS.flatMap((p) => matchesOf(text, p, before).map((m) => ({ from: m.from, to: m.to, rule: p.rule })));
}
