/**
 * What a long agent session costs the store: a 200-turn session with an offline model, the bytes
 * its runs hold in every table against the JSON of its final transcript (the messages the model
 * is sent at the last turn, plus the last answer). Each answer should be stored once: in its model
 * step, not again in live events or in the run's output.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { stead as lib } from "./lib.js";

/** Deterministic text of `bytes` characters from `seed` (words of a small vocabulary). */
function prose(seed: number, bytes: number): string {
  const words = ["the", "order", "ships", "from", "our", "warehouse", "within", "two", "days", "and", "you", "will", "receive", "a", "tracking", "number", "by", "email", "once", "it", "leaves", "refund", "invoice", "account"];
  let x = seed >>> 0 || 1;
  let out = "";
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += `${words[x % words.length] ?? "the"} `;
  }
  return out.slice(0, bytes).trimEnd() + ".";
}

const hash = (s: string) => [...s].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);

export interface TranscriptResult {
  turns: number;
  transcriptBytes: number;
  storedBytes: number;
  /** Of storedBytes, per table. */
  byTable: Record<string, number>;
  fileBytes: number;
}

/** Bytes of every column value of the session's rows, per table. */
function storedBytes(path: string, sessionId: string): Record<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const ids = (db.prepare("SELECT id FROM runs WHERE session_id = ?").all(sessionId) as { id: string }[]).map((r) => r.id);
    const sum = (table: string, where: string) => {
      const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => `coalesce(length(CAST("${c.name}" AS BLOB)), 0)`);
      return Number((db.prepare(`SELECT coalesce(sum(${cols.join(" + ")}), 0) AS n FROM ${table} WHERE ${where} IN (SELECT value FROM json_each(?))`).get(JSON.stringify(ids)) as { n: number }).n);
    };
    return { runs: sum("runs", "id"), steps: sum("steps", "run_id"), waits: sum("waits", "run_id"), holds: sum("holds", "run_id"), events: sum("events", "run_id") };
  } finally {
    db.close();
  }
}

export async function sessionStorage(dir: string, turns: number): Promise<TranscriptResult> {
  const path = join(dir, "stead.db");
  let lastPrompt: LanguageModelV3Prompt = [];
  let lastAnswer = "";
  const model = lib.scriptedModel({
    respond: (prompt) => {
      const asked = lib.lastUserText(prompt);
      lastPrompt = prompt;
      // Answers of 1-4 KB, questions of 50-400 characters: a support chat with a long-winded model.
      lastAnswer = prose(hash(asked), 1000 + (hash(asked) % 3000));
      return { text: lastAnswer };
    },
  });
  const support = lib.agent("bench-support", { model, instructions: "Answer the customer.", maxTurns: 4 });
  const stead = lib.createStead({ store: path });
  await stead.ready();
  const session = stead.session(support, "bench-session");
  let last = "";
  for (let i = 0; i < turns; i++) last = (await session.send(prose(i + 1, 50 + ((i * 37) % 350)))).runId;
  const worker = stead.worker({ definitions: [support], pollMs: 5, concurrency: 1 }).start();
  await stead.runs.waitFor(last, { timeoutMs: 600_000, pollMs: 100 });
  await worker.stop();
  await stead.close();
  const transcript = [...lastPrompt.filter((m) => m.role !== "system"), { role: "assistant", content: [{ type: "text", text: lastAnswer }] }];
  const byTable = storedBytes(path, "bench-session");
  const fileBytes = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  return { turns, transcriptBytes: Buffer.byteLength(JSON.stringify(transcript)), storedBytes: Object.values(byTable).reduce((a, b) => a + b, 0), byTable, fileBytes };
}
