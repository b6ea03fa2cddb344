/** The `stead` CLI's processes killed, interrupted, paused and followed: real child processes and signals. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, lines, readText, requireBuild, spawnCli, tempDir, until, type StatusJson } from "./cli-helpers.js";

const APPROVAL = join(FIXTURES, "approval.ts");
const SLOW = join(FIXTURES, "slow.ts");
const GATED = join(FIXTURES, "gated.ts");

beforeAll(() => requireBuild());

describe("stead CLI: processes that die or are stopped", () => {
  const stepsIn = (log: string) => lines(readText(log));

  it("a run whose CLI is SIGKILLed mid-run is finished by `stead worker` without repeating completed steps", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const log = join(dir, "effects.log");
    const store = ["--store", db];
    const gate = join(dir, "gate");
    const runner = spawnCli(["run", SLOW, "--input", JSON.stringify({ log, ms: 100, gate }), "--id", "slow-1", ...store], dir);
    // s3 waits for the gate, which opens only after the kill: the run is surely mid-way when killed.
    await until("two steps to execute", () => (stepsIn(log).length >= 2 ? true : undefined));
    runner.child.kill("SIGKILL");
    const killed = await runner.done;
    expect(killed.signal).toBe("SIGKILL");

    const atKill = JSON.parse((await cli(["status", "slow-1", "--json", ...store], dir)).stdout) as StatusJson;
    expect(atKill.run.status).toBe("running");
    const completedBefore = atKill.journal.filter((s) => s.status === "completed").map((s) => s.id);
    expect(completedBefore[0]).toBe("s1");
    expect(completedBefore.length).toBeLessThanOrEqual(2);

    writeFileSync(gate, "");
    const worker = spawnCli(["worker", SLOW, "--poll", "50", "--lease", "5s", ...store], dir);
    const done = await until(
      "the worker to complete slow-1",
      async () => {
        const s = JSON.parse((await cli(["status", "slow-1", "--json", ...store], dir)).stdout) as StatusJson;
        return s.run.status === "completed" ? s : undefined;
      },
      45_000,
    );
    worker.child.kill("SIGTERM");
    const stopped = await worker.done;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain("claimed slow-1");
    expect(stopped.stdout).toMatch(/slow-1 completed/);
    expect(stopped.stdout).toContain("worker stopped");

    expect(done.run.output).toEqual(["s1", "s2", "s3", "s4", "s5"]);
    const executed = stepsIn(log);
    for (const id of completedBefore) expect(executed.filter((s) => s === id), id).toHaveLength(1);
    for (const id of ["s1", "s2", "s3", "s4", "s5"]) expect(executed, id).toContain(id);
    for (const id of ["s3", "s4", "s5"]) expect(executed.filter((s) => s === id), id).toHaveLength(1);
  });

  it("the first SIGINT hands the run back as pending (exit 130); a second exits at once", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    const statusOf = async (id: string) => {
      const r = await cli(["status", id, "--json", ...store], dir);
      return r.code === 0 ? (JSON.parse(r.stdout) as StatusJson).run.status : undefined;
    };

    const gate = join(dir, "gate-g");
    const graceful = spawnCli(["run", GATED, "--input", JSON.stringify({ gate }), "--id", "g-1", ...store], dir);
    await until("g-1 to complete step one", () => (graceful.stdout().includes('step "one" completed') ? true : undefined));
    graceful.child.kill("SIGINT");
    await until("the SIGINT to be seen", () => (graceful.stderr().includes("stopping") ? true : undefined));
    writeFileSync(gate, "");
    const g = await graceful.done;
    expect(g.code).toBe(130);
    expect(lines(g.stderr)).toEqual([expect.stringMatching(/^stead: SIGINT: stopping after the current step and handing run g-1 back/)]);
    expect(g.stdout).toContain('step "two" completed');
    expect(g.stdout).toContain("handed back as pending");
    expect(g.stdout).not.toContain('step "three" completed');
    expect(await statusOf("g-1")).toBe("pending");

    const forced = spawnCli(["run", GATED, "--input", JSON.stringify({ gate: join(dir, "gate-never") }), "--id", "f-1", ...store], dir);
    await until("f-1 to complete step one", () => (forced.stdout().includes('step "one" completed') ? true : undefined));
    forced.child.kill("SIGINT");
    await until("the first SIGINT to be seen", () => (forced.stderr().includes("stopping") ? true : undefined));
    forced.child.kill("SIGINT");
    const f = await forced.done;
    expect(f.code).toBe(130);
    expect(f.stderr).toContain("second SIGINT: exiting now");
    // Exited without handing back: the lease is left to dead-owner detection.
    expect(await statusOf("f-1")).toBe("running");
  });

  it("pause parks a running run (exit 5), resume --follow finishes it (exit 0), cancel ends one (exit 6)", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    const gate = join(dir, "gate-p");
    const paused = spawnCli(["run", GATED, "--input", JSON.stringify({ gate }), "--id", "p-1", ...store], dir);
    await until("p-1 to complete step one", () => (paused.stdout().includes('step "one" completed') ? true : undefined));
    const pause = await cli(["pause", "p-1", ...store], dir);
    expect(pause.code).toBe(0);
    expect(pause.stdout).toContain("pause requested: run p-1 parks after its current step");
    writeFileSync(gate, "");
    const p = await paused.done;
    expect(p.code).toBe(5);
    expect(p.stdout).toContain("stead resume p-1");
    const resume = await cli(["resume", "p-1", "--follow", ...store], dir);
    expect(resume.code).toBe(0);
    expect(resume.stdout).toContain('step "three" completed');
    expect(lines(resume.stdout).pop()).toBe('["one","two","three"]');

    const gateC = join(dir, "gate-c");
    const cancelled = spawnCli(["run", GATED, "--input", JSON.stringify({ gate: gateC }), "--id", "c-1", ...store], dir);
    await until("c-1 to complete step one", () => (cancelled.stdout().includes('step "one" completed') ? true : undefined));
    const cancel = await cli(["cancel", "c-1", "--reason", "enough", ...store], dir);
    expect(cancel.code).toBe(0);
    writeFileSync(gateC, "");
    const c = await cancelled.done;
    expect(c.code).toBe(6);
    expect(c.stdout).toContain("run c-1 was cancelled (cancelled: enough)");
    expect(c.stdout).not.toContain('step "three" completed');
  });

  it("a replay that diverges is held (exit 4) with its release commands; release --follow completes it", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    const stepFile = join(dir, "step-name");
    writeFileSync(stepFile, "alpha");
    expect((await cli(["run", join(FIXTURES, "drift.ts"), "--input", JSON.stringify({ stepFile }), "--id", "d-1", ...store], dir)).code).toBe(3);
    writeFileSync(stepFile, "beta");
    const held = await cli(["approve", "d-1", "go", "--follow", ...store], dir);
    expect(held.code).toBe(4);
    expect(held.stdout).toContain("HELD nondeterminism");
    expect(held.stdout).toContain("stead release d-1 nondeterminism --choice retry");
    const holds = JSON.parse((await cli(["holds", "--json", ...store], dir)).stdout) as { runId: string; kind: string }[];
    expect(holds).toMatchObject([{ runId: "d-1", kind: "nondeterminism" }]);
    writeFileSync(stepFile, "alpha");
    const released = await cli(["release", "d-1", "nondeterminism", "--choice", "retry", "--follow", ...store], dir);
    expect(released.code).toBe(0);
    expect(lines(released.stdout).pop()).toBe('"done after alpha"');
    expect((await cli(["holds", ...store], dir)).stdout.trim()).toBe("no open holds");
  });

  it("logs -f follows a run until it ends and exits with its outcome", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    expect((await cli(["run", APPROVAL, "--input", '{"item":"x"}', "--id", "a-1", ...store], dir)).code).toBe(3);
    const follower = spawnCli(["logs", "a-1", "-f", ...store], dir);
    await until("logs -f to print the history", () => (follower.stdout().includes("wait.opened") ? true : undefined));
    expect((await cli(["approve", "a-1", "ship", "--follow", ...store], dir)).code).toBe(0);
    const r = await follower.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/approval\.approved/);
    expect(r.stdout).toMatch(/step\.completed\s+step "ship-it" completed/);
    expect(lines(r.stdout).pop()).toMatch(/run\.completed/);
  });
});
