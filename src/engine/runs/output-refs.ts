import type { OutputRefField, RunReads, StepRow } from "../../store/types.js";

/**
 * Output references: fields of a run's output that a journaled step of the same run holds already
 * (an agent's final text is its last model step's), stored once there. The run's row lists them
 * beside its output (`outputRefs`, from schema 13) and leaves them out of it; readers get the
 * output with each one put back. A parent run receives the whole value when the child ends.
 *
 * Runs completed before schema 13 hold them in-band instead, as `{ "$steadRef": { step, path } }`
 * values of top-level fields (`outputRefs` null): read for ever, and only for such rows, so a
 * user's output that merely looks like one is never rewritten.
 */
const IN_BAND = "$steadRef";

function inBandRef(v: unknown): { step: string; path: readonly (string | number)[] } | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const r = (v as Record<string, unknown>)[IN_BAND];
  if (typeof r !== "object" || r === null) return undefined;
  const { step, path } = r as { step?: unknown; path?: unknown };
  return typeof step === "string" && Array.isArray(path) ? { step, path: path as (string | number)[] } : undefined;
}

/** The references a stored run lists, or (rows before schema 13) holds in its output. */
export function outputRefsOf(output: unknown, outputRefs: string | null | undefined): OutputRefField[] {
  // Undefined as null: a store of one's own written before schema 13 returns no such field.
  if (outputRefs !== null && outputRefs !== undefined) {
    try {
      const list = JSON.parse(outputRefs) as unknown;
      return Array.isArray(list) ? (list as OutputRefField[]) : [];
    } catch {
      return [];
    }
  }
  if (typeof output !== "object" || output === null || Array.isArray(output)) return [];
  return Object.entries(output).flatMap(([field, v]) => {
    const ref = inBandRef(v);
    return ref ? [{ field, ...ref }] : [];
  });
}

/** The steps a stored run's output refers to (JSON text as stored): a summary of the run must keep them. */
export function referencedSteps(stored: { output: string | null; outputRefs: string | null }): string[] {
  const listed = stored.outputRefs !== null && stored.outputRefs !== undefined;
  if (!listed && !stored.output?.includes(IN_BAND)) return [];
  let output: unknown = null;
  try {
    output = !listed && stored.output !== null ? JSON.parse(stored.output) : null;
  } catch {
    return [];
  }
  return outputRefsOf(output, stored.outputRefs).map((r) => r.step);
}

/**
 * The value to store for `value` with `refs` held by steps: each ref's field null (kept in its
 * place, so a reader's output has the fields in their order), and the list to store beside it.
 * Without refs the list is empty, not absent: a row with a list is read as written after schema 13.
 */
export function storedWithRefs(value: unknown, refs: readonly OutputRefField[]): { value: unknown; refs: OutputRefField[] } {
  if (refs.length === 0 || typeof value !== "object" || value === null || Array.isArray(value)) return { value, refs: [] };
  const held: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const r of refs) held[r.field] = null;
  return { value: held, refs: [...refs] };
}

/** The output with every reference put back as the value it points at; one that leads nowhere is left as stored (null, or the in-band reference). */
export async function resolveOutputRefs(store: Pick<RunReads, "completedStep">, runId: string, output: unknown, outputRefs: string | null): Promise<unknown> {
  const refs = outputRefsOf(output, outputRefs);
  if (refs.length === 0) return output;
  const resolved: Record<string, unknown> = typeof output === "object" && output !== null && !Array.isArray(output) ? { ...(output as Record<string, unknown>) } : {};
  // The one step each reference names, not the journal: a listing resolves a page of outputs.
  const steps = new Map<string, Promise<StepRow | undefined>>();
  for (const ref of refs) {
    if (!steps.has(ref.step)) steps.set(ref.step, store.completedStep(runId, ref.step));
    const step = await steps.get(ref.step);
    let value: unknown = step?.output ? (JSON.parse(step.output) as unknown) : undefined;
    for (const k of ref.path) value = typeof value === "object" && value !== null ? (value as Record<string | number, unknown>)[k] : undefined;
    if (value !== undefined) resolved[ref.field] = value;
  }
  return resolved;
}
