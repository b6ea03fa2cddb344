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
import { SteadError } from "./errors.js";
import { CUT_MARK } from "./thrown.js";
import { SECRET_PATTERNS, startsWord, type SecretPattern } from "./secret-patterns.js";

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

/** Shortest configured value: a shorter one would redact common words and numbers. */
export const MIN_SECRET_LENGTH = 8;

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
  undecided(text: string, before = ""): { at: number; rule: string } | undefined {
    if (!this.active) return undefined;
    let tail: { at: number; rule: string } | undefined;
    const earliest = (at: number, rule: string) => {
      if (at < text.length && (tail === undefined || at < tail.at)) tail = { at, rule };
    };
    for (const l of this.literals.values()) earliest(literalTail(text, l.plain), l.rule);
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
    if (!this.patterns) return out;
    for (const p of SECRET_PATTERNS) {
      if (!p.anchor.test(text)) continue;
      for (const m of text.matchAll(p.regex)) {
        if (p.wordStart && !wordStartAt(text, m.index, before)) continue;
        if (p.valid && !p.valid(m.groups?.secret ?? m[0])) continue;
        if (MARKER.test(m.groups?.secret ?? m[0])) continue;
        out.push({ from: m.index, to: m.index + m[0].length, rule: p.rule });
      }
    }
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
      for (const p of SECRET_PATTERNS) {
        if (!p.anchor.test(out)) continue;
        out = out.replace(p.regex, (...args: unknown[]) => {
          const match = args[0] as string;
          const last = args[args.length - 1];
          const groups = typeof last === "object" && last !== null ? (last as Record<string, string | undefined>) : undefined;
          const offset = args[typeof last === "object" && last !== null ? args.length - 3 : args.length - 2] as number;
          const source = args[typeof last === "object" && last !== null ? args.length - 2 : args.length - 1] as string;
          if (p.wordStart && !wordStartAt(source, offset, before)) return match;
          const secret = groups?.secret;
          if (p.valid && !p.valid(secret ?? match)) return match;
          if (MARKER.test(secret ?? match)) return match;
          if (secret === undefined) return hit(p.rule);
          const at = match.lastIndexOf(secret);
          return `${match.slice(0, at)}${hit(p.rule)}${match.slice(at + secret.length)}`;
        });
      }
    }
    return { text: out, rules };
  }

  /** `text` with a candidate cut short right before a cut mark (CUT_MARK) hidden whole. */
  private hideCutOff(text: string, hit: (rule: string) => string, before: string): string {
    let out = text;
    const marks = [...text.matchAll(CUT_MARK)].map((m) => m.index).reverse();
    for (const at of marks) {
      const head = out.slice(0, at);
      const hidden = this.unfinished(head, before);
      if (hidden) out = `${head.slice(0, hidden.at)}${hit(hidden.rule)}${out.slice(at)}`;
    }
    return out;
  }

  /**
   * The candidate left unfinished at the end of `text` when nothing will ever finish it (a stream
   * cut off, a text clipped): the start of its undecided tail, if that is at least
   * MIN_SECRET_LENGTH long (a shorter one is ordinary text more often than part of a secret).
   */
  unfinished(text: string, before = ""): { at: number; rule: string } | undefined {
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

/** The earliest position of `text` where `p`'s open match runs to the end (`text.length` if none). */
function openTail(text: string, p: SecretPattern, before: string): number {
  const re = p.open;
  re.lastIndex = 0;
  for (;;) {
    const m = re.exec(text);
    if (!m || m.index >= text.length) return text.length;
    if (!p.wordStart || wordStartAt(text, m.index, before)) return m.index;
    re.lastIndex = m.index + 1;
  }
}

/** What a redaction leaves: a shape whose secret is one already is not redacted again. */
const MARKER = /^\[redacted:[^\]]*\]$/;

/** How far back `startsWord` reads. */
const WORD_CONTEXT = 16;

/** `startsWord` at `offset` of `text`, reading `before` as the text that precedes it. */
function wordStartAt(text: string, offset: number, before: string): boolean {
  if (before === "" || offset >= WORD_CONTEXT) return startsWord(text, offset);
  const context = before.slice(-WORD_CONTEXT);
  return startsWord(context + text.slice(0, offset), context.length + offset);
}
