/**
 * What an operator's maintenance commands cost, on the SQLite store: reading a dump whose one line
 * is a 10 MB workspace file, against reading its bytes.
 */
import { dumpWithBigFile, FILE_BYTES, importDumpMs, readBytesMs, verifyDumpMs } from "./import-long-line.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";

const REPEATS = 5;
const mb = (n: number) => `${fmt(n / 1e6, 1)} MB`;

export async function maintenanceSuite(): Promise<void> {
  console.log(`Maintenance (SQLite store): a dump holding one ${mb(FILE_BYTES)} workspace file\n`);
  const rows = await inScratch("maintenance", async (dir) => {
    const { dump, bytes } = await dumpWithBigFile(dir);
    const pairs: [number, number][] = [];
    const imports: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      // Alternating which goes first: the second of a pair finds the file in the page cache either way.
      if (i % 2 === 0) {
        const read = await readBytesMs(dump);
        pairs.push([read, await verifyDumpMs(dump)]);
      } else {
        const verify = await verifyDumpMs(dump);
        pairs.push([await readBytesMs(dump), verify]);
      }
      imports.push(await importDumpMs(dump, `${dir}/import-${i}.db`));
    }
    const ratios = pairs.map(([r, v]) => v / r);
    const ratio = median(ratios);
    const out: Row[] = [
      { name: `read the dump's ${mb(bytes)} to their end`, value: `${fmt(median(pairs.map(([r]) => r)), 1)} ms`, target: "", pass: null, note: noisy(pairs.map(([r]) => r)) },
      { name: "check the dump whole (lines, rows, digests)", value: `${fmt(median(pairs.map(([, v]) => v)), 1)} ms`, target: "", pass: null, note: noisy(pairs.map(([, v]) => v)) },
      { name: "check / read (median of pairs)", value: `${fmt(ratio, 1)}x`, target: "<= 30x", pass: ratio <= 30, note: noisy(ratios) },
      { name: "  stead import of it into a new store", value: `${fmt(median(imports), 0)} ms`, target: "", pass: null, note: noisy(imports) },
    ];
    return out;
  });
  printTable(rows);
}
