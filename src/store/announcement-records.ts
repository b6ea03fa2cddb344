/** The catalog's rows joined with their announcements, as every SQL store returns them. */
import type { AnnouncementRow, DefinitionRecord, DefinitionRow } from "./types.js";

/**
 * `definitions` (in the order to return) each with the announcements of its name and
 * fingerprint, in the order given. An announcement with no catalog row is left out: both are
 * written in one transaction, and only announcements are ever deleted.
 */
export function definitionRecords(definitions: readonly DefinitionRow[], announcements: readonly (AnnouncementRow & { alive: boolean })[]): DefinitionRecord[] {
  const key = (name: string, fingerprint: string) => JSON.stringify([name, fingerprint]);
  const byKey = new Map<string, (AnnouncementRow & { alive: boolean })[]>();
  for (const a of announcements) {
    const k = key(a.name, a.fingerprint);
    const list = byKey.get(k);
    if (list) list.push(a);
    else byKey.set(k, [a]);
  }
  return definitions.map((d) => ({ ...d, workers: byKey.get(key(d.name, d.fingerprint)) ?? [] }));
}

/** Catalog rows in the order ports/definitions.ts promises, for the stores' ORDER BY. */
export const DEFINITIONS_ORDER = "ORDER BY name, last_seen_at DESC, fingerprint";
/** Announcements oldest first (a tie: by worker id). */
export const ANNOUNCEMENTS_ORDER = "ORDER BY name, announced_at, worker_id";
