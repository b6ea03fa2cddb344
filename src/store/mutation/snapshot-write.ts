/**
 * A workspace snapshot's write (Mutation.snapshots), from the schema description, for both stores
 * (SQLite's applyMutation, Postgres's stead_apply_mutation from migration 6): each column of
 * `snapshots` but its serial id takes the SnapshotWrite field of its name (`files_changed` ←
 * `filesChanged`), null when absent. A snapshot at a (run_id, seq) that has a `start` or `step`
 * one replaces every column of it but the position; `settle` snapshots accumulate. The conflict
 * target is the snapshots_step index's, predicate included, so the two cannot drift apart.
 */
import type { SnapshotWrite } from "../types.js";
import { columnsAt } from "../schema/model.js";
import { fieldOf, recordset } from "../schema/json-record.js";
import { SCHEMA_VERSION, TABLES } from "../schema/tables.js";

const table = TABLES.snapshots;

const target = table.indexes.find((i) => i.name === "snapshots_step");
if (!target?.unique || target.where === undefined) throw new Error("snapshots_step must be the unique partial index of a start/step snapshot's position");
const KEY = target.columns as readonly string[];
const WHERE = target.where;

function columns(version: number) {
  const all = columnsAt(table, version)
    .filter((c) => c.name !== table.serial.column)
    .map((c) => ({ name: c.name, field: fieldOf(c.name), type: c.type }));
  const onConflict = `ON CONFLICT (${KEY.join(", ")}) WHERE ${WHERE} DO UPDATE SET ${all
    .filter((c) => !KEY.includes(c.name))
    .map((c) => `${c.name} = excluded.${c.name}`)
    .join(", ")}`;
  return { all, written: all.filter((c) => c.name !== "run_id"), names: all.map((c) => c.name).join(", "), onConflict };
}

const CURRENT = columns(SCHEMA_VERSION);

/** One row, `?` placeholders in the order of {@link snapshotParams}. */
export const SNAPSHOT_UPSERT_SQL = `INSERT INTO snapshots (${CURRENT.names}) VALUES (${CURRENT.all.map(() => "?").join(", ")})
${CURRENT.onConflict}`;

export function snapshotParams(runId: string, x: SnapshotWrite): unknown[] {
  const w = x as unknown as Record<string, unknown>;
  return [runId, ...CURRENT.written.map((c) => w[c.field] ?? null)];
}

/**
 * Postgres: the rows of a JSON array of SnapshotWrites (`json`, a jsonb expression) for run
 * `runId` (an SQL expression), in one INSERT, in the array's order (a settle snapshot's id says
 * which came first). `version`: the schema whose columns it writes (see stepsFromJson).
 */
export function snapshotsFromJson(runId: string, json: string, version = SCHEMA_VERSION): string {
  const c = columns(version);
  return `INSERT INTO snapshots (${c.names})
  SELECT ${runId}, ${c.written.map((w) => `x."${w.field}"`).join(", ")}
  FROM ${recordset(json, c.written, "x", true)}
  ORDER BY x.i
  ${c.onConflict}`;
}
