/**
 * A full store holds its runs `storage` until a probe finds room: the worker's headroom plus the
 * reserve it must set aside again. Nothing said how much that was, nor how much was free, so on a
 * small volume a person could not tell why it never resumed. `ps`, `why`, the hold's details,
 * the `storage.full` event and the worker's report name the space needed and the space free.
 *
 * Real full stores, made as test/storage-full.test.ts makes them: an SQLite file at its size
 * limit (SQLite's page limit), and, as root, a Postgres server whose data directory is on a small
 * tmpfs filled to its last byte (Postgres cannot tell a client its disk's free space: "unknown").
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { workflow, type Stead } from "../../src/index.js";
import { cli, requireBuild } from "../cli-helpers.js";
import { Sandbox, useSandbox, type WorkerConfig, type WorkerProcess } from "../fixtures/crash/harness.js";
import { PRIVATE_SERVER_UNAVAILABLE } from "../setup/postgres.js";
import { fillToTheLastByte, ROOT, withPostgresOnTmpfs } from "../helpers/full-disk.js";
import { waitUntil } from "../helpers/waiting.js";

const WORKFLOWS = fileURLToPath(new URL("../fixtures/pg/workflows.mjs", import.meta.url));
const HEADROOM = 256 * 1024;
const RESERVE = 64 * 1024;
const STORAGE = { storageHeadroomBytes: HEADROOM, storageAlertMs: 1000, storageProbeMs: 100 };
const INPUT = { steps: 30, delayMs: 5, padBytes: 20_000 };
const ballast = workflow("ballast", { version: "1" }, () => null);

const config = (extra: WorkerConfig): WorkerConfig => ({ workflows: WORKFLOWS, pollMs: 20, leaseMs: 3000, worker: STORAGE, start: [{ id: "r1", workflow: "many", input: INPUT }], ...extra });

interface PsHold {
  kind: string;
  since?: number;
  needBytes?: number;
  freeBytes?: number | null;
}

/** Every surface names `need` bytes needed, and the bytes free (a number below it, or unknown: null). */
async function namesTheSpace(stead: Stead, worker: WorkerProcess, store: string, dir: string, need: number, free: "known" | "unknown"): Promise<void> {
  await worker.waitFor((r) => r.type === "storage" && r.report.state === "still-full", "the worker to say the store stays full", 30_000);
  const report = worker.reports.find((r) => r.type === "storage" && r.report.state === "still-full");
  expect(report?.type === "storage" ? report.report : undefined).toMatchObject({ needBytes: need });
  await stead.runs.waitFor("r1", { until: (r) => r.status === "held", timeoutMs: 10_000, pollMs: 50 });
  const [hold] = await stead.holds.list({ runId: "r1" });
  expect(hold?.kind).toBe("storage");
  const details = hold?.details as { needBytes?: unknown; freeBytes?: unknown };
  expect(details.needBytes).toBe(need);

  const ps = await cli(["ps", "--json", "--store", store], dir);
  expect(ps.code, ps.stderr).toBe(0);
  const psHold = (JSON.parse(ps.stdout) as { id: string; holds: PsHold[] }[]).find((r) => r.id === "r1")?.holds[0];
  expect(psHold).toMatchObject({ kind: "storage", needBytes: need });
  const text = await cli(["ps", "--store", store], dir);
  const line = text.stdout.split("\n").find((l) => l.startsWith("r1 ")) ?? "";
  expect(line).toMatch(/storage full since \S+, needs \S+ \S+ free/);

  const why = await cli(["why", "r1", "--store", store], dir);
  expect(why.stdout).toContain(`${need} bytes`);

  await waitUntil("a storage.full event", async () => (await stead.runs.events({ runId: "r1" })).find((e) => e.type === "storage.full"), { timeoutMs: 15_000 });
  const event = (await stead.runs.events({ runId: "r1" })).find((e) => e.type === "storage.full");
  expect(event?.data).toMatchObject({ needBytes: need });
  if (free === "known") {
    for (const f of [details.freeBytes, psHold?.freeBytes, event?.data.freeBytes]) {
      expect(typeof f).toBe("number");
      expect(f as number).toBeLessThan(need);
    }
    expect(line).toMatch(/needs \S+ \S+ free, \S+ \S+ free/);
    expect(why.stdout).toMatch(new RegExp(`${need} bytes\\) are free .*; \\S+ \\S+ \\(\\d+ bytes\\) were free when it was held`));
  } else {
    for (const f of [details.freeBytes, psHold?.freeBytes, event?.data.freeBytes]) expect(f).toBeNull();
    expect(line).toMatch(/needs \S+ \S+ free, free space unknown/);
    expect(why.stdout).toContain("free space cannot be told");
  }
}

describe("an SQLite store at its size limit", () => {
  let box: Sandbox;
  let stead: Stead;
  useSandbox((b, s) => {
    box = b;
    stead = s;
  });

  it("names the space its storage hold waits for (headroom and reserve) and the space free, in ps, why, the hold, the event and the report", async () => {
    requireBuild();
    await stead.runs.start(ballast, "x".repeat(900_000), { id: "ballast-1" });
    const probe = new Database(box.store, { readonly: true });
    const size = Number(probe.pragma("page_count", { simple: true })) * Number(probe.pragma("page_size", { simple: true }));
    probe.close();
    const worker = box.spawn(config({ sqlite: { maxSizeBytes: size + 300_000, reserveBytes: RESERVE } }));
    await worker.waitFor((r) => r.type === "storage" && r.report.state === "full", "the worker to find the store full", 60_000);
    await namesTheSpace(stead, worker, box.store, box.dir, HEADROOM + RESERVE, "known");
  }, 120_000);
});

describe.skipIf(!ROOT || PRIVATE_SERVER_UNAVAILABLE !== undefined)("a Postgres store whose data disk is full (a tmpfs; needs root to mount)", () => {
  it("names the size of the probe write it waits for, and that the free space is unknown", async () => {
    requireBuild();
    const box = new Sandbox();
    await withPostgresOnTmpfs(box, "full-space", async ({ url, stead, mount }) => {
      const worker = box.spawn({ ...config({ start: [{ id: "r1", workflow: "many", input: { ...INPUT, steps: 60, logStarts: true } }] }), store: url });
      await box.waitForEffect((l) => l.stepId === "s03" && l.phase === "done", "the run to be under way", 30_000);
      const filler = join(mount, "filler");
      fillToTheLastByte(filler);
      await worker.waitFor((r) => r.type === "storage" && r.report.state === "full", "the worker to find the store full", 60_000);
      // The probe writes at least 2 MiB; the reserve (1 MiB) is released while full, so it is asked for again within it.
      await namesTheSpace(stead, worker, url, box.dir, 2 * 1024 * 1024, "unknown");
      rmSync(filler);
    });
  }, 180_000);
});
