/**
 * A process that starts an embedded Postgres server it owns, prints the server's handle as one
 * JSON line, and then idles until killed. The server-test SIGKILLs it to prove the watchdog
 * stops an orphaned server and removes its files.
 *
 *   node --import tsx test/setup/embedded-server-child.ts
 */
import { createEmbeddedServer } from "./embedded-server.js";

const server = await createEmbeddedServer();
process.stdout.write(`${JSON.stringify(server.handle)}\n`);
setInterval(() => undefined, 60_000);
