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
import { SECRET_PATTERNS, startsWord } from "./secret-patterns.js";

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
  /** The rules that matched, each once: configured values in the order met, then shapes in SECRET_PATTERNS order. */
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
   * `text` (JSON text, as stored) with every secret replaced. A configured value is replaced only
   * inside strings (keys included): text that holds one is parsed and its strings redacted, since
   * a value replaced inside a number (`2024010112` holding `20240101`) would break the JSON.
   */
  json(text: string): Redacted {
    this.jsonRe ??= this.compile("json");
    if (this.literals.size > 0 && this.holdsLiteral(text)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON after all: redacted as text.
        return this.apply(text, this.jsonRe, "json");
      }
      const rules = new Set<string>();
      const redacted = this.value(parsed, rules);
      return rules.size === 0 ? { text, rules: [] } : { text: JSON.stringify(redacted), rules: [...rules] };
    }
    return this.apply(text, this.jsonRe, "json");
  }

  private holdsLiteral(text: string): boolean {
    for (const l of this.literals.values()) if (text.includes(l.json)) return true;
    return false;
  }

  /** A plain string with every secret replaced. */
  plain(text: string): Redacted {
    this.plainRe ??= this.compile("plain");
    return this.apply(text, this.plainRe, "plain");
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

  private apply(text: string, literals: RegExp, form: "json" | "plain"): Redacted {
    if (!this.active) return { text, rules: [] };
    this.quickRe ??= this.compileQuick();
    if (!this.quickRe.test(text)) return { text, rules: [] };
    const rules: string[] = [];
    const hit = (rule: string) => {
      if (!rules.includes(rule)) rules.push(rule);
      return `[redacted:${rule}]`;
    };
    let out = this.literals.size ? text.replace(literals, (m) => hit([...this.literals.values()].find((l) => l[form] === m)?.rule ?? "secret")) : text;
    if (this.patterns) {
      for (const p of SECRET_PATTERNS) {
        if (!p.anchor.test(out)) continue;
        out = out.replace(p.regex, (...args: unknown[]) => {
          const match = args[0] as string;
          const last = args[args.length - 1];
          const groups = typeof last === "object" && last !== null ? (last as Record<string, string | undefined>) : undefined;
          const offset = args[typeof last === "object" && last !== null ? args.length - 3 : args.length - 2] as number;
          const source = args[typeof last === "object" && last !== null ? args.length - 2 : args.length - 1] as string;
          if (p.wordStart && !startsWord(source, offset)) return match;
          const secret = groups?.secret;
          if (secret === undefined) return hit(p.rule);
          const at = match.lastIndexOf(secret);
          return `${match.slice(0, at)}${hit(p.rule)}${match.slice(at + secret.length)}`;
        });
      }
    }
    return { text: out, rules };
  }
}
