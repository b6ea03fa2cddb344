import { SteadError } from "../errors.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses "250ms", "10s", "10m", "2h", "1d", "1h30m" or a number of milliseconds. */
export function parseDuration(value: string | number, what = "duration"): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0) return value;
  } else {
    const text = value.trim();
    if (/^\d+$/.test(text)) return Number(text);
    const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
    let total = 0;
    let matched = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      total += Number(m[1]) * (UNITS[m[2] ?? "ms"] ?? 1);
      matched = re.lastIndex;
    }
    if (matched > 0 && matched === text.length) return total;
  }
  throw new SteadError("STEAD_BAD_OPTION", `invalid ${what}: ${JSON.stringify(value)}`, {
    fix: 'use milliseconds or a duration like "30s", "10m", "2h", "1d"',
  });
}

export function formatDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)}ms`;
  if (abs < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  if (abs < 3_600_000) return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
  if (abs < 86_400_000) return `${Math.floor(ms / 3_600_000)}h${Math.round((ms % 3_600_000) / 60_000)}m`;
  return `${Math.floor(ms / 86_400_000)}d${Math.round((ms % 86_400_000) / 3_600_000)}h`;
}
