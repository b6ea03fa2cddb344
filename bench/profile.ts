/**
 * `npm run bench -- --profile`: where W1's CPU goes. One run of W1 on the SQLite store with
 * synchronous=NORMAL (so the CPU, not the disk, is what is timed), sampled by V8's profiler in this
 * process; the ten functions with the most self time, and the ten with the most total time among
 * Stead's own (dist/), are written to a file and printed.
 */
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fmt } from "./report.js";
import { inScratch } from "./temp-dir.js";
import { steadSequential } from "./w1-sequential.js";

const STEPS = 5000;
const OUT = resolve(import.meta.dirname, "../bench-profile.txt");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

function label(n: ProfileNode): string {
  const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${n.callFrame.lineNumber + 1}` : "native";
  return `${n.callFrame.functionName || "(anonymous)"} ${where}`;
}

/** Self and total sample counts per function (a function counted once per sample however deep it recurses). */
function tally(p: Profile): { self: Map<string, number>; total: Map<string, number> } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const id of p.samples) {
    const n = byId.get(id);
    if (!n) continue;
    self.set(label(n), (self.get(label(n)) ?? 0) + 1);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (!node) break;
      const l = label(node);
      if (!seen.has(l)) total.set(l, (total.get(l) ?? 0) + 1);
      seen.add(l);
    }
  }
  return { self, total };
}

const top = (m: Map<string, number>, n: number, keep: (k: string) => boolean = () => true) =>
  [...m].filter(([k]) => keep(k)).sort((a, b) => b[1] - a[1]).slice(0, n);

export async function profileSuite(): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    const r = await inScratch("profile", (d) => steadSequential(join(d, "stead.db"), STEPS, { synchronous: "NORMAL" }));
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    const { self, total } = tally(profile);
    const all = profile.samples.length;
    const pct = (n: number) => `${fmt((100 * n) / all, 1).padStart(5)}%`;
    const lines = [
      `W1 on SQLite, synchronous=NORMAL, ${fmt(STEPS)} steps: ${fmt(r.usPerStep)} µs/step; ${fmt(all)} samples of 100 µs (start-up included)`,
      "",
      "Top 10 by self time:",
      ...top(self, 10).map(([k, v]) => `  ${pct(v)}  ${k}`),
      "",
      "Top 10 of Stead's own functions by total time:",
      ...top(total, 10, (k) => k.includes("dist/") && !k.includes("node_modules")).map(([k, v]) => `  ${pct(v)}  ${k}`),
    ];
    writeFileSync(OUT, `${lines.join("\n")}\n`);
    console.log(`${lines.join("\n")}\n\nwritten to ${OUT}`);
  } finally {
    session.disconnect();
  }
}
