/** The code table is the one list of codes: every code is raised, documented and mapped; each reaches the caller. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, SteadError, workflow } from "../src/index.js";
import { EXIT, exitFor } from "../src/cli/exit-codes.js";
import { parseJsonArg } from "../src/cli/context.js";
import { cli, FIXTURES, requireBuild, ROOT, tempDir } from "./cli-helpers.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.m?ts$/.test(e.name) ? [join(dir, e.name)] : []));
}

describe("the code table", () => {
  it("every code is raised somewhere in src/ (a code nobody raises is removed, not kept)", () => {
    const text = sourceFiles(join(ROOT, "src"))
      .map((f) => {
        const s = readFileSync(f, "utf8");
        // The table itself names every code: only what follows it in errors.ts counts.
        return f.endsWith(join("src", "errors.ts")) ? s.slice(s.indexOf("} as const satisfies")) : s;
      })
      .join("\n");
    const unraised = Object.keys(ERROR_CODES).filter((code) => !text.includes(`"${code}"`));
    expect(unraised).toEqual([]);
    expect(text).not.toContain('"STEAD_BAD_INPUT"');
  });

  it("the CLI's exit codes come from the table; an unknown code (another copy of Stead) is a refusal", () => {
    expect(exitFor("STEAD_BAD_JSON")).toBe(EXIT.refused);
    expect(exitFor("STEAD_RUN_NOT_FOUND")).toBe(EXIT.refused);
    for (const code of ["STEAD_STORE_LOST", "STEAD_STORAGE_FULL", "STEAD_STORE_UNREACHABLE"]) expect(exitFor(code), code).toBe(EXIT.store);
    expect(exitFor("STEAD_INVALID_MUTATION")).toBe(EXIT.internal);
    expect(exitFor("STEAD_BAD_INPUT")).toBe(EXIT.refused);
    for (const [code, info] of Object.entries(ERROR_CODES)) expect(exitFor(code), code).toBe(EXIT[info.exit]);
  });
});

describe("codes a caller receives", () => {
  it("STEAD_BAD_JSON: a JSON argument that does not parse, or is empty", () => {
    for (const text of ["{bad json", ""]) {
      let e: unknown;
      try {
        parseJsonArg(text, "--input");
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(SteadError);
      expect(e).toMatchObject({ code: "STEAD_BAD_JSON", message: expect.stringMatching(/^--input is not valid JSON/) as unknown });
    }
  });

  it("STEAD_BAD_ID: a malformed run id; STEAD_ID_TAKEN: a run id in use", async () => {
    const stead = h.create();
    const wf = workflow("codes-ids", () => 1);
    expect(await caught(() => stead.runs.start(wf, null, { id: "-rf" }))).toMatchObject({ code: "STEAD_BAD_ID" });
    await stead.runs.start(wf, null, { id: "taken" });
    expect(await caught(() => stead.runs.start(wf, null, { id: "taken" }))).toMatchObject({ code: "STEAD_ID_TAKEN", runId: "taken" });
  });

  it("STEAD_BAD_OPTION: a duration or an idempotency key the command does not take", async () => {
    const stead = h.create();
    const wf = workflow("codes-options", () => 1);
    expect(await caught(() => stead.runs.start(wf, null, { idempotencyKey: "" }))).toMatchObject({ code: "STEAD_BAD_OPTION" });
    const sleepy = workflow("codes-sleep", async (ctx) => {
      await ctx.sleep("nap", "soon");
      return 1;
    });
    const run = await stead.run(sleepy, null, FAST_FOLLOW);
    expect(run.error).toMatchObject({ code: "STEAD_BAD_OPTION", message: expect.stringContaining('"soon"') as unknown });
  });

  describe("a held run's own code when a command needs it to continue", () => {
    const v1 = workflow("codes-held", { version: "1" }, async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.approval("ok");
      return ctx.step("b", () => 2);
    });

    async function heldUnder(next: ReturnType<typeof workflow>): Promise<{ stead: ReturnType<typeof h.create>; id: string }> {
      const stead = h.create();
      const parked = await stead.run(v1, null, FAST_FOLLOW);
      await stead.runs.approve(parked.id, "ok");
      expect((await stead.runs.follow(parked.id, [next], FAST_FOLLOW)).status).toBe("held");
      return { stead, id: parked.id };
    }

    it("STEAD_DEFINITION_CHANGED: resume or retry of a run held definition_changed names its ways out", async () => {
      const v2 = workflow("codes-held", { version: "2" }, v1.fn);
      const { stead, id } = await heldUnder(v2);
      for (const command of [() => stead.runs.resume(id), () => stead.runs.retry(id)]) {
        const e = await caught(command);
        expect(e).toBeInstanceOf(SteadError);
        expect(e).toMatchObject({ code: "STEAD_DEFINITION_CHANGED", runId: id, fix: expect.stringContaining("--accept-change") as unknown });
      }
      expect((await stead.runs.resume(id, { acceptChange: true })).from).toBe("held");
    });

    it("STEAD_NONDETERMINISM: resume or retry of a run held nondeterminism", async () => {
      const diverged = workflow("codes-held", { version: "1" }, async (ctx) => {
        await ctx.step("x", () => 1);
        return 0;
      });
      const { stead, id } = await heldUnder(diverged);
      for (const command of [() => stead.runs.resume(id), () => stead.runs.retry(id)]) {
        expect(await caught(command)).toMatchObject({ code: "STEAD_NONDETERMINISM", runId: id, fix: expect.stringContaining(`stead release ${id} nondeterminism --choice retry`) as unknown });
      }
    });
  });
});

describe("stead --json: an error is one JSON line on stderr with its code", () => {
  let dir: string;
  let store: string[];
  beforeAll(async () => {
    requireBuild();
    dir = tempDir();
    store = ["--store", join(dir, "s.db")];
    expect((await cli(["run", join(FIXTURES, "two.ts"), "--workflow", "cli-alpha", "--id", "done-1", ...store], dir)).code).toBe(0);
  });

  it.each([
    ["an unknown run", ["status", "nope", "--json"], "STEAD_RUN_NOT_FOUND", { runId: "nope" }],
    ["an unknown session", ["sessions", "show", "nope", "--json"], "STEAD_SESSION_NOT_FOUND", {}],
    ["an unknown status", ["ps", "--status", "bogus", "--json"], "STEAD_BAD_OPTION", {}],
  ])("%s", async (_name, args, code, ids) => {
    const r = await cli([...args, ...store], dir);
    expect(r.code).toBe(2);
    const out = r.stderr.trim().split("\n");
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0] ?? "")).toEqual({ error: { code, message: expect.any(String) as unknown, fix: expect.any(String) as unknown, ...ids } });
  });

  it("without --json the line stays text", async () => {
    const r = await cli(["status", "nope", ...store], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^stead: no run with id nope — /);
  });
});
