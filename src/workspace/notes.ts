/** A snapshot's notes as stored (JSON text), capped so a tree of unreadable files cannot bloat a row. */
import type { NoteKind, ScanNote } from "./scan.js";

const MAX_NOTES = 100;

export interface StoredNotes {
  notes: ScanNote[];
  /** Notes beyond the cap, by kind. */
  more?: Partial<Record<NoteKind, number>>;
}

export function encodeNotes(notes: readonly ScanNote[]): string | null {
  if (notes.length === 0) return null;
  const kept = notes.slice(0, MAX_NOTES);
  const more: Partial<Record<NoteKind, number>> = {};
  for (const n of notes.slice(MAX_NOTES)) more[n.kind] = (more[n.kind] ?? 0) + 1;
  return JSON.stringify(Object.keys(more).length ? { notes: kept, more } : { notes: kept });
}

export function decodeNotes(text: string | null): StoredNotes {
  if (!text) return { notes: [] };
  try {
    const v = JSON.parse(text) as StoredNotes;
    return Array.isArray(v.notes) ? v : { notes: [] };
  } catch {
    return { notes: [] };
  }
}

/** Paths a snapshot has no content for (gaps, skipped files): an in-place restore leaves them alone. */
export function unmanagedPaths(notes: readonly ScanNote[]): Set<string> {
  return new Set(notes.map((n) => n.path));
}

const KIND_LABEL: Record<NoteKind, string> = {
  "too-large": "skipped, too large",
  unsupported: "skipped, unsupported type",
  gap: "gap, could not be read",
  secret: "skipped, may hold secrets",
};

/** What a note says about its path, for people: "skipped, too large (3000 bytes, over the 2048-byte ceiling)". */
export function noteLabel(n: ScanNote): string {
  return `${KIND_LABEL[n.kind] ?? n.kind}${n.detail ? ` (${n.detail})` : ""}`;
}
