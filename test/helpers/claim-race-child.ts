/**
 * A separate process that claims runs from an SQLite store until none are left, then prints the
 * ids it claimed as JSON. Used to race real processes against one store file.
 *
 *   node --import tsx test/helpers/claim-race-child.ts <store path> <worker id> <start at ms>
 */
import { SqliteStore } from "../../src/store/sqlite/index.js";

const [path, workerId, startAt] = process.argv.slice(2);
if (!path || !workerId) throw new Error("usage: claim-race-child.ts <store path> <worker id> [start at ms]");

const store = new SqliteStore({ path, create: false });
await store.migrate();
// Start together so the claims overlap in time.
const wait = Number(startAt ?? 0) - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));
const mine: string[] = [];
for (;;) {
  const got = await store.claim({
    owner: { workerId, host: "race-host", pid: process.pid, start: "race" },
    definitions: ["race"],
    limit: 1,
    leaseMs: 600_000,
    now: Date.now(),
  });
  if (got.length === 0) break;
  mine.push(...got.map((c) => c.run.id));
}
await store.close();
process.stdout.write(JSON.stringify(mine));
