/** Workspace snapshots on the SQLite store: capture cost against a full read, and storage growth. */
import { captureBench, storageBench } from "./workspace.js";
import { fmt, median, noisy, printTable, type Row } from "./report.js";
import { inScratch } from "./temp-dir.js";

const REPEATS = 7;
const SNAPSHOTS = 100;

const mb = (n: number) => `${fmt(n / 1024 / 1024, 2)} MB`;

export async function workspaceSuite(): Promise<void> {
  console.log("Workspace snapshots (SQLite store; 10,000 files of 1-4 KB random bytes in 10 x 10 directories)\n");
  const c = await inScratch("ws-capture", (d) => captureBench(d, REPEATS));
  const ratios = c.pairs.map(([read, cap]) => cap / read);
  const ratio = median(ratios);
  const read = median(c.pairs.map(([r]) => r));
  const unchanged = median(c.pairs.map(([, x]) => x));
  const one = median(c.oneChanged);
  const s = await inScratch("ws-storage", (d) => storageBench(d, SNAPSHOTS));
  const base = s.treeBytes + s.changedBytes;
  const stored = s.storedBytes / base;
  console.log(
    `capture (change watcher on, as in a worker): ${c.files} files, ${mb(c.treeBytes)}; full read ${c.pairs.map(([r]) => fmt(r)).join(" / ")} ms; unchanged capture ${c.pairs.map(([, x]) => fmt(x)).join(" / ")} ms; one file changed ${c.oneChanged.map((x) => fmt(x)).join(" / ")} ms`,
  );
  console.log(
    `storage: ${s.snapshots} snapshots, one file changed per step: tree ${mb(s.treeBytes)} + changed ${mb(s.changedBytes)}; stored ${mb(s.storedBytes)} (manifests ${mb(s.manifestBytes)}); SQLite file grew ${mb(s.fileBytes)}\n`,
  );
  const rows: Row[] = [
    { name: "full read of the tree", value: `${fmt(read)} ms`, target: "", pass: null, note: noisy(c.pairs.map(([r]) => r)) },
    { name: "snapshot of the unchanged tree", value: `${fmt(unchanged)} ms`, target: "", pass: null, note: noisy(c.pairs.map(([, x]) => x)) },
    { name: "unchanged snapshot / full read (median of pairs)", value: `${fmt(ratio * 100, 1)}%`, target: "< 15%", pass: ratio < 0.15, note: noisy(ratios) },
    { name: "  same without the change watcher (stat every file)", value: `${fmt(median(c.statScan))} ms (${fmt((median(c.statScan) / read) * 100, 1)}% of a read)`, target: "", pass: null, note: noisy(c.statScan) },
    { name: "snapshot with one file changed", value: `${fmt(one)} ms (${fmt((one / read) * 100, 1)}% of a read)`, target: "", pass: null, note: noisy(c.oneChanged) },
    { name: "100 snapshots: stored / (tree + changed)", value: `${fmt(stored, 3)}x`, target: "< 1.20x", pass: stored < 1.2 },
    { name: "  of which manifests (trees, rows)", value: `${mb(s.manifestBytes)} (${fmt((s.manifestBytes / base) * 100, 1)}%)`, target: "", pass: null },
    { name: "  SQLite file growth / (tree + changed)", value: `${fmt(s.fileBytes / base, 3)}x`, target: "", pass: null },
  ];
  printTable(rows);
}
