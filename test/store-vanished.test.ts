/**
 * The store file deleted (`rm -rf .stead`) or replaced under a running `stead worker`: the worker
 * must notice, stop executing, and exit non-zero with a clear message, reporting nothing completed
 * after the store vanished, instead of "completing" runs into the unlinked file and staying silent
 * while runs started in the new store wait for ever.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createStead, type WorkflowDefinition } from "../src/index.js";
import { slowFlow } from "./fixtures/cli/slow.js";
import { FIXTURES, lines, readText, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

const SLOW = join(FIXTURES, "slow.ts");

beforeAll(() => requireBuild());

async function startRun(dir: string, id: string, input: { log: string; ms: number; gate?: string }): Promise<void> {
  const stead = createStead({ store: join(dir, ".stead", "stead.db") });
  try {
    // The fixture's definition is typed by the built package (it imports "stead"), the same object at run time.
    await stead.runs.start(slowFlow as unknown as WorkflowDefinition<typeof input>, input, { id });
  } finally {
    await stead.close();
  }
}

describe("the store deleted under a running worker", () => {
  it("mid-run: the worker stops executing, reports nothing completed, and exits 7 naming the deleted store", async () => {
    const dir = tempDir();
    const log = join(dir, "effects.log");
    const gate = join(dir, "gate");
    await startRun(dir, "v1", { log, ms: 50, gate });
    const worker = spawnCli(["worker", SLOW, "--poll", "50"], dir);
    // s3 waits for the gate: the run is surely mid-way when the store goes.
    await until("two steps to run", () => (lines(readText(log)).length >= 2 ? true : undefined));
    rmSync(join(dir, ".stead"), { recursive: true, force: true });
    writeFileSync(gate, "");
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(7);
    expect(exit.stderr).toMatch(/the store .*stead\.db was deleted while this process had it open/);
    expect(exit.stdout).not.toMatch(/v1 completed/);
    // Whatever the run did after the deletion, it went no further than the step in flight.
    expect(lines(readText(log)).length).toBeLessThanOrEqual(3);
    expect(existsSync(join(dir, ".stead"))).toBe(false);
  });

  it("idle: a worker whose store is replaced by a new one exits 7 instead of watching the wrong file", async () => {
    const dir = tempDir();
    const log = join(dir, "effects.log");
    await startRun(dir, "v1", { log, ms: 10 });
    const worker = spawnCli(["worker", SLOW, "--poll", "50"], dir);
    await until("the first run to complete", () => (worker.stdout().includes("v1 completed") ? true : undefined));
    rmSync(join(dir, ".stead"), { recursive: true, force: true });
    // A run started afterwards lands in a new store at the same path.
    await startRun(dir, "v2", { log, ms: 10 });
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(7);
    expect(exit.stderr).toMatch(/the store .*stead\.db was (deleted|replaced by another file) while this process had it open/);
    expect(exit.stdout).not.toContain("claimed v2");
    expect(lines(readText(log)).filter((l) => l === "s1")).toHaveLength(1);
  });
});
