/**
 * A session's turns share one workspace: a turn starts where the turn before it left the files,
 * also on a machine where the directory is gone (the turn inherits the earlier turn's snapshot).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { agent, lastUserText, modelTurns, scriptedModel, tool } from "../src/index.js";
import { steadHarness, tempDir } from "./helpers/temp-store.js";

const h = steadHarness();
const dirs: (() => void)[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) d();
  await h.cleanup();
});

/** Each turn appends its message to notes.txt (a tool call), then answers. */
const notes = agent("ws-notes", {
  model: scriptedModel({
    respond: (prompt) => {
      // Earlier turns' answers are in the prompt too: count only this turn's assistant messages.
      const last = prompt.map((m) => m.role).lastIndexOf("user");
      const mine = modelTurns(prompt.slice(last));
      return mine === 0 ? { toolCalls: [{ name: "append", input: { line: lastUserText(prompt) } }] } : { text: "noted" };
    },
  }),
  tools: {
    append: tool({
      input: z.object({ line: z.string() }),
      run: ({ line }, ctx) => {
        const file = join(ctx.workspace ?? "", "notes.txt");
        writeFileSync(file, (existsSync(file) ? readFileSync(file, "utf8") : "") + line + "\n");
        return "ok";
      },
    }),
  },
});

it("a turn on a machine without the directory starts from the files the earlier turn left", async () => {
  const d = tempDir("stead-ws-session-");
  dirs.push(d.remove);
  const root = join(d.dir, "repo");
  mkdirSync(root);
  const stead = h.create();
  const session = stead.session(notes, "s1", { workspace: root });
  await session.send("first");
  const w = h.worker(stead, { definitions: [notes] }).start();
  await stead.runs.waitFor((await session.turns())[0]?.id ?? "", { timeoutMs: 20_000 });
  expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("first\n");
  await w.stop();

  rmSync(root, { recursive: true });
  const { runId } = await session.send("second");
  h.worker(stead, { definitions: [notes] }).start();
  const run = await stead.runs.waitFor(runId, { timeoutMs: 20_000 });
  expect(run.status).toBe("completed");
  expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("first\nsecond\n");
  const inherited = (await stead.runs.events({ runId })).find((e) => e.type === "workspace.restored");
  expect(inherited?.data).toMatchObject({ action: "inherited", fromTurn: 1 });
});

it("with the directory in place, a turn takes it as it is (no inheritance)", async () => {
  const d = tempDir("stead-ws-session-");
  dirs.push(d.remove);
  const root = join(d.dir, "repo");
  mkdirSync(root);
  const stead = h.create();
  const session = stead.session(notes, "s2", { workspace: root });
  await session.send("first");
  h.worker(stead, { definitions: [notes] }).start();
  await stead.runs.waitFor((await session.turns())[0]?.id ?? "", { timeoutMs: 20_000 });
  writeFileSync(join(root, "notes.txt"), "edited by hand\n");
  const { runId } = await session.send("second");
  await stead.runs.waitFor(runId, { timeoutMs: 20_000 });
  expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("edited by hand\nsecond\n");
  expect((await stead.runs.events({ runId })).some((e) => e.type === "workspace.restored")).toBe(false);
});
