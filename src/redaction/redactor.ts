/**
 * Secrets kept out of what Stead stores: configured values, the values of configured environment
 * variables, values a run read through `ctx.secret`, and well-known secret shapes (secret-patterns.ts).
 * Each is replaced by `[redacted:<rule>]`, which names the rule and needs no escaping in JSON, so
 * redacted JSON text stays valid JSON with the same shape.
 *
 * Two forms of text are redacted: JSON text (a stored payload, where a configured value is matched
 * in its JSON-escaped form) and plain strings (inside event data). Redacting redacted text changes
 * nothing.
 */
import { SteadError } from "../errors.js";
import { CUT_MARK } from "../thrown.js";
import { SECRET_PATTERNS } from "./secret-patterns.js";
import { matchesOf, openTail, shapeSpans } from "./secret-scan.js";

export interface RedactionOptions {
  /** Values never to store (API keys, passwords), each at least 8 characters. */
  secrets?: readonly string[];
  /** Environment variables whose values are secrets, read when Stead is created (an unset one is skipped). */
  env?: readonly string[];
  /** Redact well-known secret shapes: provider API keys, bearer tokens, private keys, JWTs, URL passwords. Default true. */
  patterns?: boolean;
}

export interface Redacted {
  text: string;
  /** The rules that matched, each once, in the order met (within one string: configured values, then shapes in SECRET_PATTERNS order). */
  rules: string[];
}

/** Where a text's undecided tail starts, the rule that holds it, and the configured value it may begin. */
export interface Undecided {
  at: number;
  rule: string;
  literal?: string;
}

/** Shortest configured value: a shorter one would redact common words and numbers. */
export const MIN_SECRET_LENGTH = 8;

/** How many cut marks a text's redaction reads, and how far back from each (see hideCutOff). */
const CUT_MARKS_READ = 16;
const CUT_REACH = 16 * 1024 + 64;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

interface Literal {
  rule: string;
  plain: string;
  json: string;
}

export class Redactor {
  private readonly literals = new Map<string, Literal>();
  private plainRe: RegExp | undefined;
  private jsonRe: RegExp | undefined;
  /** Whether a text may hold anything to redact: one cheap test, most payloads hold nothing. */
  private quickRe: RegExp | undefined;
  private readonly patterns: boolean;

  private constructor(patterns: boolean) {
    this.patterns = patterns;
  }

  static from(options: RedactionOptions = {}, env: NodeJS.ProcessEnv = process.env): Redactor {
    const r = new Redactor(options.patterns ?? true);
    for (const [i, s] of (options.secrets ?? []).entries()) r.add(`secret-${i + 1}`, s, "redaction.secrets");
    for (const name of options.env ?? []) {
      const v = env[name];
      if (v !== undefined && v !== "") r.add(`env:${name}`, v, `redaction.env (${name})`);
    }
    return r;
  }

  /** Whether anything at all would be redacted. */
  get active(): boolean {
    return this.patterns || this.literals.size > 0;
  }

  /** Whether `text` may hold anything to redact: a secret, a shape's anchor, or a cut that may have split one. */
  private mayHold(text: string): boolean {
    this.quickRe ??= this.compileQuick();
    return this.quickRe.test(text) || text.includes("… (");
  }

  /** Adds a value to redact from now on, under `rule`. */
  add(rule: string, value: string, what = rule): void {
    if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH) {
      throw new SteadError("STEAD_BAD_OPTION", `${what} is shorter than ${MIN_SECRET_LENGTH} characters: redacting it would replace ordinary text`, {
        fix: `give secrets of at least ${MIN_SECRET_LENGTH} characters; a short value is better left out (well-known secret shapes are redacted anyway)`,
      });
    }
    if (this.literals.has(value)) return;
    this.literals.set(value, { rule, plain: value, json: JSON.stringify(value).slice(1, -1) });
    this.plainRe = undefined;
    this.jsonRe = undefined;
    this.quickRe = undefined;
  }

  /**
   * `text` (JSON text, as stored) with every secret replaced. A text that may hold one is parsed
   * and its strings (keys included) redacted as plain text, so a shape is matched as its value
   * reads (a tab is a tab, not `\\t`), a configured value only inside strings (a value replaced
   * inside a number, `2024010112` holding `20240101`, would break the JSON), and the result is
   * JSON of the same shape. Text that is not JSON is redacted as it stands.
   */
  json(text: string): Redacted {
    if (!this.active) return { text, rules: [] };
    if (!this.mayHold(text)) return { text, rules: [] };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.jsonRe ??= this.compile("json");
      return this.apply(text, this.jsonRe, "json");
    }
    const rules = new Set<string>();
    const redacted = this.value(parsed, rules);
    return rules.size === 0 ? { text, rules: [] } : { text: JSON.stringify(redacted), rules: [...rules] };
  }

  /**
   * A plain string with every secret replaced. `before`: the text that came right before it in
   * a stream, read only to tell whether a match at its start begins a word.
   */
  plain(text: string, before = ""): Redacted {
    this.plainRe ??= this.compile("plain");
    return this.apply(text, this.plainRe, "plain", before);
  }

  /**
   * A copy of a JSON-like value (event data) with every string, keys included, redacted; the same
   * object when nothing matched.
   */
  value<T>(v: T, rules: Set<string>): T {
    if (typeof v === "string") {
      const r = this.plain(v);
      for (const x of r.rules) rules.add(x);
      return r.text as T;
    }
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x: unknown) => {
        const y = this.value(x, rules);
        if (y !== x) changed = true;
        return y;
      });
      return (changed ? out : v) as T;
    }
    if (typeof v === "object" && v !== null) {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const key = this.value(k, rules);
        const y: unknown = this.value(x, rules);
        if (key !== k || y !== x) changed = true;
        out[key] = y;
      }
      return (changed ? out : v) as T;
    }
    return v;
  }

  /**
   * Where the undecided tail of plain `text` starts, for text redacted piece by piece as it
   * streams (stream-redactor.ts): the earliest position from which more text could still make or
   * grow a match (a proper beginning of a configured value, a shape's `open`), moved back to the
   * start of any match that spans it, so that no match is cut in two; with the rule that holds
   * it. Undefined when every match is decided.
   */
  undecided(text: string, before = ""): Undecided | undefined {
    if (!this.active) return undefined;
    let tail: Undecided | undefined;
    const earliest = (at: number, rule: string, literal?: string) => {
      if (at < text.length && (tail === undefined || at < tail.at)) tail = literal === undefined ? { at, rule } : { at, rule, literal };
    };
    for (const l of this.literals.values()) earliest(literalTail(text, l.plain), l.rule, l.plain);
    if (this.patterns) for (const p of SECRET_PATTERNS) earliest(openTail(text, p, before), p.rule);
    if (tail === undefined) return undefined;
    const spans = this.spans(text, before);
    for (let moved = true; moved; ) {
      moved = false;
      for (const s of spans) {
        if (s.from < tail.at && tail.at < s.to) {
          tail = { at: s.from, rule: s.rule };
          moved = true;
        }
      }
    }
    // The part before the tail is let out as text of its own: a match that ends where it ends
    // may not be one with what follows (a shape that may not be followed by more of its
    // characters), so it stays undecided too. Each round moves back to a match's start.
    for (let round = 0; tail.at > 0; round++) {
      const head = text.slice(0, tail.at);
      const at: number = tail.at;
      const ending = this.spans(head, before).filter((s) => s.to === at);
      const first = ending.reduce<{ from: number; rule: string } | undefined>((a, s) => (a === undefined || s.from < a.from ? s : a), undefined);
      if (!first) break;
      // A chain of adjacent matches is rare and long only when made so: past a few, hold it all.
      tail = round < 8 ? { at: first.from, rule: first.rule } : { at: 0, rule: first.rule };
    }
    return tail;
  }

  /** Every match in plain `text` as it stands (before any replacement), with its rule. */
  spans(text: string, before = ""): { from: number; to: number; rule: string }[] {
    const out: { from: number; to: number; rule: string }[] = [];
    if (!this.active) return out;
    if (this.literals.size) {
      this.plainRe ??= this.compile("plain");
      for (const m of text.matchAll(this.plainRe)) out.push({ from: m.index, to: m.index + m[0].length, rule: this.literals.get(m[0])?.rule ?? "secret" });
    }
    if (this.patterns) out.push(...shapeSpans(text, before));
    return out;
  }

  private compile(form: "json" | "plain"): RegExp {
    // Longest first: a secret that contains another is replaced whole.
    const literals = [...this.literals.values()].map((l) => l[form]).sort((a, b) => b.length - a.length);
    // Matches nothing when there is nothing to redact.
    return new RegExp(literals.length ? literals.map(escapeRegExp).join("|") : "(?!)", "g");
  }

  private compileQuick(): RegExp {
    const literals = [...this.literals.values()].flatMap((l) => [l.plain, l.json]).map(escapeRegExp);
    const parts = [...literals, ...(this.patterns ? SECRET_PATTERNS.map((p) => p.anchor.source) : [])];
    return new RegExp(parts.length ? parts.join("|") : "(?!)");
  }

  private apply(text: string, literals: RegExp, form: "json" | "plain", before = ""): Redacted {
    if (!this.active) return { text, rules: [] };
    if (!this.mayHold(text)) return { text, rules: [] };
    const rules: string[] = [];
    const hit = (rule: string) => {
      if (!rules.includes(rule)) rules.push(rule);
      return `[redacted:${rule}]`;
    };
    // First, on the text as it stands: a cut candidate's context may be a match that is replaced below.
    let out = text.includes("… (") ? this.hideCutOff(text, hit, before) : text;
    if (this.literals.size) out = out.replace(literals, (m) => hit([...this.literals.values()].find((l) => l[form] === m)?.rule ?? "secret"));
    if (this.patterns) {
      // Each shape in table order, on the text the shapes before it left (a row may need another's match as context).
      for (const p of SECRET_PATTERNS) {
        const found = matchesOf(out, p, before);
        if (found.length === 0) continue;
        let next = "";
        let from = 0;
        for (const m of found) {
          next += `${out.slice(from, m.secretFrom)}${hit(p.rule)}`;
          from = m.secretTo;
        }
        out = next + out.slice(from);
      }
    }
    return { text: out, rules };
  }

  /**
   * `text` with a candidate cut short right before a cut mark (CUT_MARK) hidden whole. Only the
   * last CUT_MARKS_READ marks, each read back CUT_REACH characters: Stead's own clips leave one
   * per field and one per stack line, at most nine, each after at most 16 KiB; anyone can write
   * more of that text, and reading the whole text back from each would cost its square.
   */
  private hideCutOff(text: string, hit: (rule: string) => string, before: string): string {
    let out = text;
    const marks = [...text.matchAll(CUT_MARK)].map((m) => m.index).slice(-CUT_MARKS_READ).reverse();
    for (const at of marks) {
      const start = Math.max(0, at - CUT_REACH);
      const head = out.slice(start, at);
      const hidden = this.unfinished(head, start === 0 ? before : out.slice(Math.max(0, start - 64), start));
      if (hidden) out = `${out.slice(0, start + hidden.at)}${hit(hidden.rule)}${out.slice(at)}`;
    }
    return out;
  }

  /**
   * The candidate left unfinished at the end of `text` when nothing will ever finish it (a stream
   * cut off, a text clipped): the start of its undecided tail, if that is at least
   * MIN_SECRET_LENGTH long (a shorter one is ordinary text more often than part of a secret).
   */
  unfinished(text: string, before = ""): Undecided | undefined {
    const tail = this.undecided(text, before);
    return tail && text.length - tail.at >= MIN_SECRET_LENGTH ? tail : undefined;
  }
}

/** The earliest position of `text` from which its end is a proper beginning of `literal` (`text.length` if none). */
function literalTail(text: string, literal: string): number {
  const first = literal[0];
  if (first === undefined) return text.length;
  for (let p = text.indexOf(first, Math.max(0, text.length - literal.length + 1)); p !== -1; p = text.indexOf(first, p + 1)) {
    if (literal.startsWith(text.slice(p))) return p;
  }
  return text.length;
}
