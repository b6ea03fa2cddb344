/**
 * A store written by the previous release keeps working: its runs in flight are answered and run to
 * their ends by today's code, replaying the journals that release wrote (its in-band markers
 * included) without holding a run and without running a completed step again.
 */
import { chmodSync, cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { LanguageModelV3, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, describe, expect, it } from "vitest";
import { createStead, type Stead } from "../src/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { FAST_FOLLOW, tempDir } from "./helpers/temp-store.js";
import { freshMigratedDatabase } from "./setup/postgres.js";
import { DEFINITIONS, deployer, flow } from "./fixtures/release-store/definitions.js";

const STORES = join(import.meta.dirname, "fixtures/release-store/stores");
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Variant = "sqlite" | "sqlite, encrypted" | "postgres, from its dump";
const VARIANTS: Variant[] = [...(STORE_KINDS.includes("sqlite") ? (["sqlite", "sqlite, encrypted"] as const) : []), ...(STORE_KINDS.includes("postgres") ? (["postgres, from its dump"] as const) : [])];

async function opened(variant: Variant): Promise<Stead> {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  let stead: Stead;
  if (variant === "postgres, from its dump") {
    const db = await freshMigratedDatabase("release-store");
    cleanups.push(() => db.drop());
    stead = createStead({ store: db.url });
    await stead.admin.importDump(() => Readable.from([readFileSync(join(STORES, "plain.dump"))]));
  } else if (variant === "sqlite") {
    cpSync(join(STORES, "plain.db"), join(dir.dir, "plain.db"));
    stead = createStead({ store: join(dir.dir, "plain.db") });
  } else {
    cpSync(join(STORES, "sealed.db"), join(dir.dir, "sealed.db"));
    cpSync(join(STORES, "keys"), join(dir.dir, "keys"), { recursive: true });
    // A clone does not keep modes: a key file others may read is refused.
    chmodSync(join(dir.dir, "keys"), 0o700);
    for (const f of readdirSync(join(dir.dir, "keys"))) chmodSync(join(dir.dir, "keys", f), 0o600);
    stead = createStead({ store: join(dir.dir, "sealed.db"), encryption: { keyDir: join(dir.dir, "keys") } });
  }
  cleanups.push(() => stead.close());
  await stead.ready();
  return stead;
}

/** The prompts the deployer's model is sent from now on (what the model saw, not what Stead says it sent). */
function recordPrompts(): LanguageModelV3Prompt[] {
  const model = deployer.config.model as LanguageModelV3;
  const prompts: LanguageModelV3Prompt[] = [];
  const doStream = model.doStream.bind(model);
  model.doStream = (options) => {
    prompts.push(options.prompt);
    return doStream(options);
  };
  cleanups.push(() => {
    model.doStream = doStream;
  });
  return prompts;
}

describe.each(VARIANTS)("a store written by the previous release (%s)", (variant) => {
  it("reads as it did: the answerer's output resolved, the tool approval's request, the tool error in the journal", async () => {
    const stead = await opened(variant);
    expect((await stead.runs.get("rel-answerer")).output).toMatchObject({ text: "The answer is 42.", finishReason: "stop" });
    const waits = await stead.runs.waits("rel-deployer");
    expect(waits.filter((w) => w.status === "open")).toMatchObject([{ name: "approve:call_1_0", kind: "approval", request: { tool: "deploy", input: { env: "prod" } } }]);
    const open = await stead.waits.list({ kind: "approval" });
    expect(open.waits.map((w) => w.runId).sort()).toEqual(["rel-deployer", "rel-flow-1"]);
    expect((await stead.runs.why("rel-deployer")).text).toContain('approval of tool call deploy({"env":"prod"})');
  });

  it("answers and finishes every run in flight: nothing held, no completed step repeated", async () => {
    const stead = await opened(variant);
    const log = join(tempDir().dir, "effects.log");
    writeFileSync(log, "");
    process.env.STEAD_RELEASE_LOG = log;
    const prompts = recordPrompts();
    try {
      await stead.runs.approve("rel-deployer", "approve:call_1_0", { by: "ann" });
      await stead.runs.approve("rel-flow-1", "ok", { by: "ann" });
      await stead.runs.signal("rel-flow-2", "go", { extra: 5 });
      const d = await stead.runs.follow("rel-deployer", DEFINITIONS, FAST_FOLLOW);
      expect(d.status).toBe("completed");
      expect(d.output).toMatchObject({ text: "Deployed to prod after the lookup failed.", toolCalls: 2 });
      expect((await stead.runs.follow("rel-flow-2", [flow], FAST_FOLLOW)).output).toEqual({ total: 11 });
      expect((await stead.runs.follow("rel-flow-1", [flow], FAST_FOLLOW)).status).toBe("waiting");
      await stead.runs.signal("rel-flow-1", "go", { extra: 1 });
      expect((await stead.runs.follow("rel-flow-1", [flow], FAST_FOLLOW)).output).toEqual({ total: 5 });
    } finally {
      delete process.env.STEAD_RELEASE_LOG;
    }
    expect(readFileSync(log, "utf8").split("\n").filter(Boolean).sort()).toEqual(["b true", "c 1", "c 5", "deploy prod"]);
    expect(await stead.holds.list({})).toEqual([]);
    // The model was told of the release's tool error as an error, and of the approved call's result.
    const results = (prompts.at(-1) ?? []).flatMap((m) => (m.role === "tool" ? m.content : []));
    expect(results).toMatchObject([
      { type: "tool-result", toolName: "lookup", output: { type: "error-text", value: "no record for svc" } },
      { type: "tool-result", toolName: "deploy", output: { type: "text", value: "deployed to prod" } },
    ]);
    const journal = await stead.runs.journal("rel-deployer");
    expect(journal.map((s) => [s.id, s.status])).toEqual([
      ["model-1", "completed"],
      ["tool:call_0_0", "completed"],
      ["model-2", "completed"],
      ["approve:call_1_0", "completed"],
      ["tool:call_1_0", "completed"],
      ["model-3", "completed"],
    ]);
  });
});
