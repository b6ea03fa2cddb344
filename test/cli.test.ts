/** The `stead` CLI's verbs end to end: spawned `node bin/stead.js` against a store in a temp dir. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, lines, requireBuild, ROOT, tempDir, type StatusJson, type Summary } from "./cli-helpers.js";

const APPROVAL = join(FIXTURES, "approval.ts");
const TWO = join(FIXTURES, "two.ts");

beforeAll(() => requireBuild());

describe("stead CLI: a run that parks at an approval", () => {
  it("runs to the approval (exit 3), explains it, and approve --follow completes it (exit 0)", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];

    const run = await cli(["run", APPROVAL, "--input", '{"item":"book"}', "--id", "flow-1", ...store], dir);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(3);
    expect(run.stdout).toContain("run flow-1 started (cli-approval)");
    expect(run.stdout).toContain('step "prepare" completed');
    expect(run.stdout).toContain("stead approve flow-1 ship");
    expect(run.stdout).toContain('stead deny flow-1 ship --reason "..."');

    const why = await cli(["why", "flow-1", ...store], dir);
    expect(why.code).toBe(0);
    expect(why.stdout).toMatch(/waiting for approval "ship"/);
    expect(why.stdout).toContain('  approve "ship": stead approve flow-1 ship');

    const ps = await cli(["ps", "--json", ...store], dir);
    expect(ps.code).toBe(0);
    const runs = JSON.parse(ps.stdout) as Summary[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: "flow-1", status: "waiting", waitingFor: [{ kind: "approval", name: "ship" }], lastStep: { id: "ship", status: "waiting" } });

    const table = await cli(["ps", ...store], dir);
    expect(lines(table.stdout)[1]).toMatch(/^flow-1\s+cli-approval\s+waiting\s+approval "ship"\s+ship \(waiting\)\s+/);

    const status = JSON.parse((await cli(["status", "flow-1", "--json", ...store], dir)).stdout) as StatusJson;
    expect(status.run.status).toBe("waiting");
    expect(status.run.module).toBe(APPROVAL);
    expect(status.journal.map((s) => [s.id, s.status])).toEqual([["prepare", "completed"], ["ship", "waiting"]]);
    expect(status.waits).toMatchObject([{ name: "ship", kind: "approval", status: "open" }]);

    const logs = await cli(["logs", "flow-1", ...store], dir);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(/run\.created\s+created \(cli-approval\)/);
    expect(logs.stdout).toMatch(/step\.completed\s+step "prepare" completed/);
    expect(logs.stdout).toMatch(/wait\.opened\s+waiting for approval "ship"/);

    const holds = await cli(["holds", ...store], dir);
    expect(holds.stdout.trim()).toBe("no open holds");

    const approve = await cli(["approve", "flow-1", "ship", "--by", "alice", "--reason", "looks good", "--follow", ...store], dir);
    expect(approve.stderr).toBe("");
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain('approved "ship" on run flow-1 (by alice)');
    expect(approve.stdout).toContain('step "ship-it" completed');
    expect(approve.stdout).not.toContain('step "prepare" completed');
    const out = lines(approve.stdout);
    expect(JSON.parse(out[out.length - 1] ?? "")).toEqual({ prepared: "prepared book", shipped: "shipped book", by: "alice" });

    const after = JSON.parse((await cli(["status", "flow-1", "--json", ...store], dir)).stdout) as StatusJson;
    expect(after.run.status).toBe("completed");
    expect(after.run.output).toEqual({ prepared: "prepared book", shipped: "shipped book", by: "alice" });
    const events = JSON.parse((await cli(["logs", "flow-1", "--json", ...store], dir)).stdout) as { type: string; data: Record<string, unknown> }[];
    expect(events.find((e) => e.type === "approval.approved")?.data).toMatchObject({ wait: "ship", by: "alice", reason: "looks good" });
    expect(events[events.length - 1]?.type).toBe("run.completed");

    const fork = await cli(["fork", "flow-1", "--at", "prepare", "--id", "flow-2", ...store], dir);
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain("run flow-2 forked from flow-1 (cli-approval), reusing 1 journal entries");
    expect(fork.stdout).toContain(`stead worker ${APPROVAL}`);
    const forked = JSON.parse((await cli(["status", "flow-2", "--json", ...store], dir)).stdout) as StatusJson;
    expect(forked.run.status).toBe("pending");
    expect(forked.journal.map((s) => s.id)).toEqual(["prepare"]);
  });

  it("deny --follow runs the workflow's denied branch; the same denial again exits 0 naming the first, an approval after it is refused", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    expect((await cli(["run", APPROVAL, "--input", '{"item":"car"}', "--id", "d-1", ...store], dir)).code).toBe(3);
    const deny = await cli(["deny", "d-1", "ship", "--reason", "too risky", "--follow", ...store], dir);
    expect(deny.code).toBe(0);
    const out = lines(deny.stdout);
    expect(JSON.parse(out[out.length - 1] ?? "")).toMatchObject({ shipped: "kept car" });
    const again = await cli(["deny", "d-1", "ship", "--reason", "twice", ...store], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/"ship" on run d-1 was already denied by tester@\S+ at \d{4}-.*; nothing changed/);
    const approve = await cli(["approve", "d-1", "ship", ...store], dir);
    expect(approve.code).toBe(2);
    expect(lines(approve.stderr)).toEqual([expect.stringMatching(/"ship" on run d-1 was already denied by tester@\S+ at \d{4}-/)]);
  });

  it("picks the workflow with --workflow when a file exports several, and refuses to guess", async () => {
    const dir = tempDir();
    const store = ["--store", join(dir, "s.db")];
    const guess = await cli(["run", TWO, ...store], dir);
    expect(guess.code).toBe(2);
    expect(lines(guess.stderr)).toEqual([expect.stringMatching(/exports 2 workflows \(cli-alpha, cli-beta\).*--workflow/)]);
    const alpha = await cli(["run", TWO, "--workflow", "cli-alpha", "--input", "[1,2]", ...store], dir);
    expect(alpha.code).toBe(0);
    expect(alpha.stdout).toContain('{"alpha":[1,2]}');
  });

  it("loads a .ts workflow from a directory with no package.json (CommonJS) and records its module", async () => {
    const dir = tempDir();
    const file = join(dir, "flow.ts");
    writeFileSync(
      file,
      `import { workflow } from ${JSON.stringify(join(ROOT, "dist", "index.js"))};\n` +
        `const greet = (name: string): string => "hello " + name;\n` +
        `export const hello = workflow("cjs-hello", async (ctx, input: { name: string }) => ctx.step("greet", () => greet(input.name)));\n`,
    );
    const store = ["--store", join(dir, "s.db")];
    const run = await cli(["run", "flow.ts", "--input", '{"name":"ada"}', "--id", "h-1", ...store], dir);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"hello ada"');
    const status = JSON.parse((await cli(["status", "h-1", "--json", ...store], dir)).stdout) as StatusJson;
    expect(status.run.module).toBe(file);
  });

  it("documents exit codes in --help and has a description and an example on every verb", async () => {
    const dir = tempDir();
    const help = await cli(["--help"], dir);
    expect(help.code).toBe(0);
    for (const code of ["0", "1", "2", "3", "4", "5", "6", "70", "130"]) expect(help.stdout).toMatch(new RegExp(`^\\s+${code}  \\S`, "m"));
    const verbs = ["run", "worker", "ps", "status", "why", "logs", "approve", "deny", "signal", "pause", "resume", "cancel", "holds", "release", "fork", "mcp"];
    const helps = await Promise.all(verbs.map((v) => cli([v, "--help"], dir)));
    helps.forEach((h, i) => {
      expect(h.code, verbs[i]).toBe(0);
      expect(h.stdout, verbs[i]).toMatch(new RegExp(`Usage: stead ${verbs[i] ?? ""}`));
      expect(h.stdout, verbs[i]).toMatch(/Example:\n {2}\$ stead /);
    });
    for (const v of ["ps", "status", "why", "logs", "holds"]) expect(helps[verbs.indexOf(v)]?.stdout, v).toContain("--json");
  });
});
