/** A JSON value of about 1 KB, different for each step (as a step result would be). */
export function stepResult(i: number): { step: number; title: string; tags: string[]; body: string } {
  const head = { step: i, title: `result of step ${i}`, tags: ["bench", "kb", `n${i % 7}`], body: "" };
  head.body = "lorem ipsum dolor sit amet ".repeat(40).slice(0, 1024 - JSON.stringify(head).length);
  return head;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

export interface Row {
  name: string;
  value: string;
  target: string;
  pass: boolean | null;
  /** Printed after the result, e.g. why a figure should not be trusted. */
  note?: string;
}

/**
 * A note when repeats of one figure disagree by more than `tolerance` (max / min): the machine was
 * busy, so the median is a rough figure. Undefined when the repeats agree.
 */
export function noisy(xs: readonly number[], tolerance = 1.5): string | undefined {
  const pos = xs.filter((x) => Number.isFinite(x) && x > 0);
  if (pos.length < 2) return undefined;
  const lo = Math.min(...pos);
  const hi = Math.max(...pos);
  return hi / lo > tolerance ? `noisy: repeats span ${fmt(lo, lo < 10 ? 2 : 0)}..${fmt(hi, hi < 10 ? 2 : 0)}` : undefined;
}

export function printTable(rows: readonly Row[]): void {
  const w = [
    Math.max(...rows.map((r) => r.name.length), 6),
    Math.max(...rows.map((r) => r.value.length), 5),
    Math.max(...rows.map((r) => r.target.length), 6),
  ];
  const line = (a: string, b: string, c: string, d: string) => `  ${a.padEnd(w[0] ?? 0)}  ${b.padStart(w[1] ?? 0)}  ${c.padEnd(w[2] ?? 0)}  ${d}`;
  console.log(line("metric", "value", "target", "result"));
  console.log(line("-".repeat(w[0] ?? 0), "-".repeat(w[1] ?? 0), "-".repeat(w[2] ?? 0), "------"));
  for (const r of rows) {
    const result = r.pass === null ? "" : r.pass ? "PASS" : "MISS";
    console.log(line(r.name, r.value, r.target, r.note ? `${result.padEnd(4)}  (${r.note})` : result).trimEnd());
  }
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
