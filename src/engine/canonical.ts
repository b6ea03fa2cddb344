/**
 * A JSON value with object keys sorted (recursively): `{a, b}` and `{b, a}` are the same value.
 * Digests of arguments and fingerprints of calls are taken over it.
 */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}
