import type { RunReads, StepRow } from "../store/types.js";

/**
 * Output references: a run's stored output may hold, as the value of a top-level field, a pointer
 * to a string a journaled step of the same run holds already (an agent's final text is its last
 * model step's), so the text is stored once. Readers get the output with each reference replaced
 * by what it points at; a parent run receives the whole value when the child ends (nothing to resolve).
 */
export interface OutputRef {
  $steadRef: { step: string; path: readonly (string | number)[] };
}

export function outputRef(step: string, path: readonly (string | number)[]): OutputRef {
  return { $steadRef: { step, path } };
}

function isRef(v: unknown): v is OutputRef {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const r = (v as { $steadRef?: unknown }).$steadRef;
  return typeof r === "object" && r !== null && typeof (r as { step?: unknown }).step === "string" && Array.isArray((r as { path?: unknown }).path);
}

function refsOf(output: unknown): [string, OutputRef][] {
  if (typeof output !== "object" || output === null || Array.isArray(output)) return [];
  return Object.entries(output).filter((e): e is [string, OutputRef] => isRef(e[1]));
}

/** The steps a stored output (JSON text) refers to: a summary of the run must keep them. */
export function referencedSteps(outputText: string | null): string[] {
  if (outputText === null || !outputText.includes("$steadRef")) return [];
  try {
    return refsOf(JSON.parse(outputText)).map(([, r]) => r.$steadRef.step);
  } catch {
    return [];
  }
}

export function hasOutputRefs(output: unknown): boolean {
  return refsOf(output).length > 0;
}

/** The output with every reference replaced by the value it points at; a reference that leads nowhere is left as it is. */
export async function resolveOutputRefs(store: Pick<RunReads, "completedStep">, runId: string, output: unknown): Promise<unknown> {
  const refs = refsOf(output);
  if (refs.length === 0) return output;
  const resolved: Record<string, unknown> = { ...(output as Record<string, unknown>) };
  // The one step each reference names, not the journal: a listing resolves a page of outputs.
  const steps = new Map<string, Promise<StepRow | undefined>>();
  for (const [field, ref] of refs) {
    const id = ref.$steadRef.step;
    if (!steps.has(id)) steps.set(id, store.completedStep(runId, id));
    const step = await steps.get(id);
    let value: unknown = step?.output ? (JSON.parse(step.output) as unknown) : undefined;
    for (const k of ref.$steadRef.path) value = typeof value === "object" && value !== null ? (value as Record<string | number, unknown>)[k] : undefined;
    if (value !== undefined) resolved[field] = value;
  }
  return resolved;
}
