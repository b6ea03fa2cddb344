/**
 * A workspace snapshot's write (Mutation.snapshots), from the schema description: each column of
 * `snapshots` but its serial id takes the SnapshotWrite field of its name (`files_changed` ←
 * `filesChanged`), null when absent. A snapshot at a (run_id, seq) that has a `start` or `step`
 * one replaces every column of it but the position; `settle` snapshots accumulate. The conflict
 * target is the snapshots_step index's, predicate included, so the two cannot drift apart.
 *
 * Hazard: Postgres writes snapshots in stead_apply_workspace (migration 3), frozen text that
 * spells this write by itself; SQLite's applyMutation uses this one.
 */
import type { SnapshotWrite } from "../types.js";
import { TABLES } from "../schema/tables.js";

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const table = TABLES.snapshots;
const COLUMNS = table.columns.filter((c) => c.name !== table.serial.column).map((c) => ({ name: c.name, field: camel(c.name) }));
const WRITTEN = COLUMNS.filter((c) => c.name !== "run_id");

const target = table.indexes.find((i) => i.name === "snapshots_step");
if (!target?.unique || target.where === undefined) throw new Error("snapshots_step must be the unique partial index of a start/step snapshot's position");
const KEY = target.columns as readonly string[];

/** One row, `?` placeholders in the order of {@link snapshotParams}. */
export const SNAPSHOT_UPSERT_SQL = `INSERT INTO snapshots (${COLUMNS.map((c) => c.name).join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})
ON CONFLICT (${KEY.join(", ")}) WHERE ${target.where} DO UPDATE SET ${COLUMNS.filter((c) => !KEY.includes(c.name))
  .map((c) => `${c.name} = excluded.${c.name}`)
  .join(", ")}`;

export function snapshotParams(runId: string, x: SnapshotWrite): unknown[] {
  const w = x as unknown as Record<string, unknown>;
  return [runId, ...WRITTEN.map((c) => w[c.field] ?? null)];
}
