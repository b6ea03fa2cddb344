/**
 * Definitions as the control API reports them, from the store alone (no user code is loaded):
 * what workers announced, which of them are alive now, and since when.
 */
import type { DefinitionAnnouncements, DefinitionRecord } from "../../store/types.js";
import type { DefinitionVersion, DefinitionView } from "../../client/api-types.js";

export type { DefinitionVersion, DefinitionView, ServingWorker } from "../../client/api-types.js";

/** The catalog's JSON Schema text as an object; null for none, or for text that is not a JSON object. */
export function parseSchema(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function version(r: DefinitionRecord): DefinitionVersion {
  return {
    fingerprint: r.fingerprint,
    kind: r.kind,
    module: r.module,
    inputSchema: parseSchema(r.inputSchema),
    firstAnnouncedAt: r.firstAnnouncedAt,
    lastSeenAt: r.lastSeenAt,
    workers: r.workers.filter((w) => w.alive).map((w) => ({ workerId: w.workerId, host: w.host, pid: w.pid, fingerprint: w.fingerprint, since: w.announcedAt, lastSeenAt: w.seenAt })),
  };
}

/**
 * The records of one name (the most recently seen first, as the store returns them): the
 * fingerprints a start of it must satisfy. Those live workers serve, or, with none alive, the
 * last one announced (the run waits for a worker, most likely of that code).
 */
export function currentRecords(records: readonly DefinitionRecord[]): DefinitionRecord[] {
  const live = records.filter((r) => r.workers.some((w) => w.alive));
  const last = records[0];
  return live.length > 0 ? live : last ? [last] : [];
}

/** Groups the store's records (ordered by name, then most recently seen) into one view per name. */
export function definitionViews(records: readonly DefinitionRecord[]): DefinitionView[] {
  const byName = new Map<string, DefinitionRecord[]>();
  for (const r of records) {
    const list = byName.get(r.name);
    if (list) list.push(r);
    else byName.set(r.name, [r]);
  }
  const out: DefinitionView[] = [];
  for (const [name, list] of byName) {
    const versions = list.map(version);
    const current = currentRecords(list).map(version);
    const head = current[0];
    if (!head) continue;
    const workers = current.flatMap((v) => v.workers).sort((a, b) => a.since - b.since || (a.workerId < b.workerId ? -1 : 1));
    out.push({
      name,
      kind: head.kind,
      served: workers.length > 0,
      workers,
      since: workers[0]?.since ?? null,
      fingerprints: current.map((v) => v.fingerprint),
      inputSchema: head.inputSchema,
      module: head.module,
      firstAnnouncedAt: Math.min(...versions.map((v) => v.firstAnnouncedAt)),
      lastSeenAt: Math.max(...versions.map((v) => v.lastSeenAt)),
      versions,
    });
  }
  return out;
}

/** Every definition on record (or the one named), by name. */
export async function listDefinitions(store: DefinitionAnnouncements, filter: { name?: string } = {}): Promise<DefinitionView[]> {
  return definitionViews(await store.listDefinitions(filter, Date.now()));
}
