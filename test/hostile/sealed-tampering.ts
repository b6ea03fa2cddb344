/**
 * What an attacker with write access to an encrypted store does to one sealed value, for the
 * hostile listing tests: change one character of it behind Stead's back, keeping its length. In
 * SQLite the bytes are changed in the file on disk (its WAL checkpointed away first, no
 * connection open), every copy of them; in Postgres the row is updated.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { expect } from "vitest";
import type { StoreKind } from "../helpers/both-stores.js";
import { withClient } from "../setup/databases.js";

/** `value` (sealed text, base64url after its prefix) with one character near its end changed. */
export function changedSeal(value: string): string {
  const i = value.length - 20;
  return value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1);
}

/** Changes the sealed `column` of `table`'s one row whose `run_id` is `runId`. Stead must not hold the store open. */
export async function tamperSealed(kind: StoreKind, location: string, table: "runs" | "waits" | "holds", column: string, runId: string): Promise<void> {
  const key = table === "runs" ? "id" : "run_id";
  const select = `SELECT ${column} AS v FROM ${table} WHERE ${key} = `;
  if (kind === "postgres") {
    await withClient(location, async (c) => {
      const { rows } = await c.query<{ v: string }>(`${select}$1`, [runId]);
      expect(rows).toHaveLength(1);
      const sealed = String(rows[0]?.v);
      expect(sealed.startsWith("$stead1:")).toBe(true);
      await c.query(`UPDATE ${table} SET ${column} = $1 WHERE ${key} = $2`, [changedSeal(sealed), runId]);
    });
    return;
  }
  const db = new Database(location, { fileMustExist: true });
  let sealed: string;
  try {
    const rows = db.prepare(`${select}?`).all(runId) as { v: string }[];
    expect(rows).toHaveLength(1);
    sealed = String(rows[0]?.v);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  expect(sealed.startsWith("$stead1:")).toBe(true);
  expect(existsSync(`${location}-wal`) ? readFileSync(`${location}-wal`).length : 0).toBe(0);
  const file = readFileSync(location);
  const from = Buffer.from(sealed);
  const to = Buffer.from(changedSeal(sealed));
  let copies = 0;
  for (let at = file.indexOf(from); at >= 0; at = file.indexOf(from, at + 1)) {
    to.copy(file, at);
    copies++;
  }
  expect(copies).toBeGreaterThan(0);
  writeFileSync(location, file);
}
