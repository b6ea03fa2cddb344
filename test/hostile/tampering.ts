/**
 * What an attacker with write access to a dump or a backup file does, for the hostile tests: plant
 * an admin token row and recompute the unkeyed digests (row counts and SHA-256 sums) that were
 * all a dump or backup carried, so that a check of those alone passes.
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { newTokenSecret, tokenHash } from "../../src/engine/access/token-secret.js";
import { SqliteStore } from "../../src/index.js";
import { digestStore, TableDigester } from "../../src/store/transfer/digest.js";

/** A token row as a transfer row (columns in the schema's order): an admin whose secret the attacker holds. */
export function plantedToken(): { secret: string; row: Record<string, string | number | null> } {
  const secret = newTokenSecret();
  return {
    secret,
    row: { id: `tok_${randomBytes(6).toString("hex")}`, name: "planted", role: "admin", hash: tokenHash(secret), created_at: Date.now(), created_by: null, revoked_at: null, revoked_by: null, last_used_at: null },
  };
}

/** The dump's text with a planted admin token, its header's count and its trailer's tokens digest recomputed. */
export function plantTokenInDump(text: string): { text: string; secret: string } {
  const lines = text.split("\n").filter((l) => l !== "");
  const header = JSON.parse(lines[0] as string) as { tables: Record<string, number> };
  const trailer = JSON.parse(lines[lines.length - 1] as string) as { tables: Record<string, { rows: number; sha256: string }> };
  const rows = lines.slice(1, -1);
  const { secret, row } = plantedToken();
  rows.push(JSON.stringify({ t: "tokens", r: row }));
  const d = new TableDigester();
  for (const l of rows) {
    const parsed = JSON.parse(l) as { t: string; r: unknown };
    if (parsed.t === "tokens") d.add(JSON.stringify(parsed.r));
  }
  header.tables.tokens = (header.tables.tokens ?? 0) + 1;
  trailer.tables.tokens = d.digest();
  return { text: [JSON.stringify(header), ...rows, JSON.stringify(trailer)].join("\n") + "\n", secret };
}

/** Plants an admin token in the backup file and records the digests its rows now have, as `stead backup` records them. */
export async function plantTokenInBackup(file: string): Promise<string> {
  const { secret, row } = plantedToken();
  const db = new Database(file);
  try {
    db.prepare(`INSERT INTO tokens (${Object.keys(row).join(", ")}) VALUES (${Object.keys(row).map(() => "?").join(", ")})`).run(...Object.values(row));
  } finally {
    db.close();
  }
  const copy = new SqliteStore({ path: file, readonly: true });
  const tables = await digestStore(copy).finally(() => copy.close());
  const edit = new Database(file);
  try {
    const record = JSON.parse((edit.prepare("SELECT value FROM stead_meta WHERE key = 'backup'").get() as { value: string }).value) as Record<string, unknown>;
    edit.prepare("UPDATE stead_meta SET value = ? WHERE key = 'backup'").run(JSON.stringify({ ...record, tables }));
  } finally {
    edit.close();
  }
  return secret;
}
