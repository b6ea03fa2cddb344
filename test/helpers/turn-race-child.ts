/**
 * A separate process that creates runs as turns of one session in an SQLite store, then prints
 * [run id, turn] pairs as JSON. Used to race real processes on one session's turn numbers.
 *
 *   node --import tsx test/helpers/turn-race-child.ts <store path> <session id> <prefix> <count> <start at ms>
 */
import { SqliteStore } from "../../src/store/sqlite/index.js";

const [path, sessionId, prefix, count, startAt] = process.argv.slice(2);
if (!path || !sessionId || !prefix || !count) throw new Error("usage: turn-race-child.ts <store path> <session id> <prefix> <count> [start at ms]");

const store = new SqliteStore({ path, create: false });
await store.migrate();
// Start together so the createRun calls overlap in time.
const wait = Number(startAt ?? 0) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const mine: [string, number | null][] = [];
for (let i = 0; i < Number(count); i++) {
  const row = await store.createRun({ id: `${prefix}-${i}`, definition: "race", module: null, fingerprint: null, input: "null", sessionId, createdAt: Date.now() }, []);
  mine.push([row.id, row.turn]);
}
await store.close();
process.stdout.write(JSON.stringify(mine));
