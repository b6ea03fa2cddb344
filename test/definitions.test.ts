/**
 * Definitions known without loading user code, through the library on both real stores: a
 * workflow's declared input schema checks every start with the definition; workers announce
 * what they serve; another instance lists it and starts runs by name, checked against the
 * announced JSON Schema. Refusals are compared with the store's rows before and after.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createStead, SteadError, workflow, type Stead, type Worker } from "../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { caught, waitUntil } from "./helpers/waiting.js";

const HERE = fileURLToPath(import.meta.url);

const fixer = workflow(
  "lib-fixer",
  {
    input: z
      .object({ issue: z.string().min(1), priority: z.number().int().min(1).max(5).default(3) })
      .refine((v) => v.issue !== "forbidden", { message: "that issue is off limits", path: ["issue"] }),
  },
  async (ctx, input) => ctx.step("fix", () => ({ issue: input.issue, priority: input.priority })),
);
const plain = workflow("lib-plain", (_ctx, input: unknown) => ({ echo: input }));
const multiV1 = workflow("lib-multi", { version: "1", input: z.object({ a: z.string() }) }, (_ctx, input) => input.a);
const multiV2 = workflow("lib-multi", { version: "2", input: z.object({ a: z.string(), b: z.number() }) }, (_ctx, input) => `${input.a}${input.b}`);

/** Type checks only (never called): a start takes the schema's input type; the function got its output type above. */
export function typedStarts(st: Stead): void {
  // @ts-expect-error the schema's issue is a string
  void st.runs.start(fixer, { issue: 5 });
  // priority has a default: a start may leave it out.
  void st.runs.start(fixer, { issue: "x" });
  // @ts-expect-error a workflow's input schema must be a schema
  workflow("not-a-schema", { input: { issue: "string" } }, () => null);
}

/** Every row a start could write, read from the database itself. */
async function written(s: OnStore): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of ["runs", "steps", "waits", "holds", "events", "idempotency_keys"]) out[t] = await s.rows(`SELECT * FROM ${t} ORDER BY 1`);
  return out;
}

describe.each(STORE_KINDS)("on %s", (kind) => {
  let s: OnStore;
  let stead: Stead;
  const workers: Worker[] = [];
  const others: Stead[] = [];
  const open = async () => {
    s = await onStore(kind, "definitions");
    stead = s.stead;
  };
  const worker = (definitions: Parameters<Stead["worker"]>[0]["definitions"]) => {
    const w = stead.worker({ definitions, pollMs: 20, graceMs: 500, leaseMs: 3_000 });
    w.on("error", () => undefined);
    workers.push(w);
    return w.start();
  };
  /** Another instance on the same store, as another process would open it: it has no definition. */
  const another = () => {
    const o = createStead({ store: s.location, create: false });
    others.push(o);
    return o;
  };
  afterEach(async () => {
    for (const w of workers.splice(0)) w.abortAll();
    for (const o of others.splice(0)) await o.close().catch(() => undefined);
    await s.cleanup();
  });

  it("a start with the definition refuses input its schema rejects, naming each issue's place and never the input, and writes nothing", async () => {
    await open();
    const before = await written(s);
    const e = await caught(() => stead.runs.start(fixer, { issue: 5, priority: "sk-live-0123456789abcdef" } as never, { idempotencyKey: "k-1" }));
    expect(e).toBeInstanceOf(SteadError);
    const err = e as SteadError;
    expect(err.code).toBe("STEAD_SCHEMA_MISMATCH");
    expect(err.message).toBe('the input of "lib-fixer" does not match its input schema: /issue: Invalid input: expected string, received number; /priority: Invalid input: expected number, received string');
    expect(err.details.issues).toEqual([
      { path: "/issue", message: "Invalid input: expected string, received number" },
      { path: "/priority", message: "Invalid input: expected number, received string" },
    ]);
    expect(JSON.stringify({ message: err.message, details: err.details, fix: err.fix })).not.toContain("sk-live");
    const refined = await caught(() => stead.runs.start(fixer, { issue: "forbidden" }));
    expect((refined as SteadError).message).toMatch(/\/issue: that issue is off limits$/);
    expect(await written(s)).toEqual(before);
  });

  it("the function receives the input as its schema parses it (defaults applied); the store keeps it as given", async () => {
    await open();
    const { id } = await stead.runs.start(fixer, { issue: "parser" });
    worker([fixer]);
    const run = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(run.output).toEqual({ issue: "parser", priority: 3 });
    expect((await s.rows("SELECT input FROM runs WHERE id = ?", id))[0]?.input).toBe('{"issue":"parser"}');
  });

  it("a worker announces what it serves; another instance lists it from the store; a graceful stop withdraws it and the catalog keeps it", async () => {
    await open();
    const w = worker([fixer, plain]);
    const reader = another();
    const live = await waitUntil("the announcement", async () => (await reader.definitions.list()).find((d) => d.name === "lib-fixer" && d.served));
    expect(live).toMatchObject({ kind: "workflow", fingerprints: [fixer.fingerprint()], module: HERE, inputSchema: fixer.input?.jsonSchema });
    expect(live.workers).toEqual([{ workerId: w.owner.workerId, host: w.owner.host, pid: process.pid, fingerprint: fixer.fingerprint(), since: expect.any(Number) as number, lastSeenAt: expect.any(Number) as number }]);
    expect((await reader.definitions.list({ name: "lib-plain" }))[0]).toMatchObject({ served: true, inputSchema: null });
    const rows = await s.rows("SELECT name, worker_id, pid FROM announcements ORDER BY name");
    expect(rows.map((r) => [r.name, r.worker_id, Number(r.pid)])).toEqual([
      ["lib-fixer", w.owner.workerId, process.pid],
      ["lib-plain", w.owner.workerId, process.pid],
    ]);

    await w.stop();
    expect(await s.rows("SELECT * FROM announcements")).toEqual([]);
    const after = await reader.definitions.list();
    expect(after.map((d) => [d.name, d.served, d.workers.length, d.fingerprints])).toEqual([
      ["lib-fixer", false, 0, [fixer.fingerprint()]],
      ["lib-plain", false, 0, [plain.fingerprint()]],
    ]);
  });

  it("a start by name is checked against the announced schema: refused with nothing written, or started and run by a worker under its code", async () => {
    await open();
    worker([fixer]);
    const caller = another();
    await waitUntil("the announcement", async () => (await caller.definitions.list()).some((d) => d.served));

    const before = await written(s);
    const bad = await caught(() => caller.runs.startByName("lib-fixer", { issue: "", priority: 9 }, { idempotencyKey: "k-bad" }));
    expect(bad).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", details: { issues: [{ path: "/issue", message: "must NOT have fewer than 1 characters" }, { path: "/priority", message: "must be <= 5" }] } });
    const unknown = await caught(() => caller.runs.startByName("lib-fixr", { issue: "x" }));
    expect(unknown).toMatchObject({ code: "STEAD_DEFINITION_NOT_FOUND", message: 'no worker has announced a definition named "lib-fixr" (known: lib-fixer)' });
    expect((unknown as SteadError).fix).toContain("stead worker <file>");
    const badName = await caught(() => caller.runs.startByName("no spaces", {}));
    expect(badName).toMatchObject({ code: "STEAD_BAD_OPTION" });
    expect(await written(s)).toEqual(before);

    const started = await caller.runs.startByName("lib-fixer", { issue: "lexer" }, { idempotencyKey: "k-1", by: "ann" });
    expect(started).toEqual({ id: expect.any(String) as string, already: false, served: true, workers: 1 });
    expect(await caller.runs.startByName("lib-fixer", { issue: "lexer" }, { idempotencyKey: "k-1", by: "ann" })).toEqual({ ...started, already: true });
    const run = await caller.runs.waitFor(started.id, { timeoutMs: 20_000 });
    expect(run.output).toEqual({ issue: "lexer", priority: 3 });
    const [row] = await s.rows("SELECT definition, fingerprint, module FROM runs WHERE id = ?", started.id);
    expect(row).toEqual({ definition: "lib-fixer", fingerprint: fixer.fingerprint(), module: HERE });

    // JSON Schema cannot say what a refinement says: the run starts, and the worker's schema refuses it.
    const refined = await caller.runs.startByName("lib-fixer", { issue: "forbidden" });
    const failed = await caller.runs.waitFor(refined.id, { timeoutMs: 20_000 });
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", message: 'the input of "lib-fixer" does not match its input schema: /issue: that issue is off limits' });
  });

  it("with two live fingerprints an input must match both schemas; with none alive, a start by name is accepted and waits", async () => {
    await open();
    const w1 = worker([multiV1]);
    const w2 = worker([multiV2]);
    const caller = another();
    await waitUntil("both announcements", async () => ((await caller.definitions.list({ name: "lib-multi" }))[0]?.workers.length === 2 ? true : undefined));
    const [both] = await caller.definitions.list({ name: "lib-multi" });
    expect([...(both?.fingerprints ?? [])].sort()).toEqual(["v:1", "v:2"]);

    const before = await written(s);
    const e = await caught(() => caller.runs.startByName("lib-multi", { a: "x" }));
    expect(e).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", details: { fingerprint: "v:2", issues: [{ path: "/b", message: "is required" }] } });
    expect(await written(s)).toEqual(before);
    expect(await caller.runs.startByName("lib-multi", { a: "x", b: 1 })).toMatchObject({ served: true, workers: 2 });

    await w1.stop();
    await w2.stop();
    const waits = await caller.runs.startByName("lib-multi", { a: "y", b: 2 });
    expect(waits).toMatchObject({ already: false, served: false, workers: 0 });
    expect((await caller.runs.get(waits.id)).status).toBe("pending");
    expect((await caller.definitions.list({ name: "lib-multi" }))[0]).toMatchObject({ served: false, workers: [], since: null });
  });
});
