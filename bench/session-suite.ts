/** Agent sessions on the SQLite store: what a long conversation costs in stored bytes. */
import { fmt, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { sessionStorage } from "./transcript.js";

const TURNS = 200;
const kb = (n: number) => `${fmt(n / 1024, 0)} KB`;

export async function sessionSuite(): Promise<void> {
  console.log(`Agent session (SQLite store; ${TURNS} turns, an offline model answering 1-4 KB to questions of 50-400 characters)\n`);
  const r = await inScratch("session", (d) => sessionStorage(d, TURNS));
  const ratio = r.storedBytes / r.transcriptBytes;
  console.log(`transcript ${kb(r.transcriptBytes)}; stored ${kb(r.storedBytes)} (${Object.entries(r.byTable).map(([t, n]) => `${t} ${kb(n)}`).join(", ")}); SQLite file ${kb(r.fileBytes)}\n`);
  const rows: Row[] = [
    { name: `${TURNS}-turn session: stored bytes / final transcript JSON`, value: `${fmt(ratio, 2)}x`, target: "<= 1.50x", pass: ratio <= 1.5 },
    { name: "  SQLite file / final transcript JSON", value: `${fmt(r.fileBytes / r.transcriptBytes, 2)}x`, target: "", pass: null },
  ];
  printTable(rows);
}
