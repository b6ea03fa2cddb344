/**
 * The operations guide's (docs/guides/operations.md) "in the clear" list of an encrypted store names every column that is not sealed,
 * with why it stays clear. It had left out `runs.workspace`, `runs.module`, `waits.resolved_by`,
 * `idempotency_keys.key`/`actor` and `holds.step_id`. Checked here from the schema description
 * (every table's every column) and the encryption layer's list of sealed columns: a column added
 * later fails this test until it is sealed or listed. And the list is held to what a real
 * encrypted store writes (both stores): no clear column holds a sealed value, every populated
 * sealed column holds only sealed values.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { localKey, workflow } from "../../src/index.js";
import { SEALED_COLUMNS } from "../../src/store/encryption/sealed-columns.js";
import { TABLES, type TableName } from "../../src/store/schema/tables.js";
import { ROOT } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { FAST_WORKER } from "../helpers/temp-store.js";
import { randomBytes } from "node:crypto";

const GUIDE = join(ROOT, "docs", "guides", "operations.md");
const sealed = new Set(Object.entries(SEALED_COLUMNS).flatMap(([t, cols]) => cols.map((c) => `${t}.${c}`)));
const every = (Object.keys(TABLES) as TableName[]).flatMap((t) => (TABLES[t].columns as readonly { name: string }[]).map((c) => `${t}.${c.name}`));

/** `table.column` names in backticks in the operations guide's encryption section, from its "in the clear" part on. */
function listedClear(): Set<string> {
  const guide = readFileSync(GUIDE, "utf8");
  const section = guide.slice(guide.indexOf("## Encryption at rest"));
  const end = section.indexOf("\n## ", 1);
  const body = end < 0 ? section : section.slice(0, end);
  const from = body.search(/in the clear/i);
  expect(from, "the operations guide's encryption section says what is in the clear").toBeGreaterThan(0);
  const names = [...body.slice(from).matchAll(/`([a-z_]+)\.([a-z_]+)`/g)].map((m) => `${m[1]}.${m[2]}`);
  return new Set(names.filter((n) => Object.hasOwn(TABLES, n.split(".")[0] ?? "")));
}

describe("the operations guide's list of clear columns", () => {
  it("names every column of the schema that is not sealed, and none that is sealed or not in the schema", () => {
    const listed = listedClear();
    expect(every.filter((c) => !sealed.has(c) && !listed.has(c)), "columns neither sealed nor in the guide's clear list").toEqual([]);
    expect([...listed].filter((c) => sealed.has(c)), "sealed columns the guide lists as clear").toEqual([]);
    expect([...listed].filter((c) => !every.includes(c)), "columns the guide lists that the schema does not have").toEqual([]);
  });

  it("says why each stays clear: every listed column is in a row of its table with a reason", () => {
    const rows = readFileSync(GUIDE, "utf8").split("\n").filter((l) => /^\| .*`[a-z_]+\.[a-z_]+`.* \| .+ \|$/.test(l));
    for (const c of listedClear()) {
      const row = rows.find((r) => r.includes(`\`${c}\``));
      expect(row, `a table row naming ${c}`).toBeDefined();
      const why = (row ?? "").split(" | ").at(-1)?.replace(/\|$/, "").trim() ?? "";
      expect(why.length, `the reason beside ${c}`).toBeGreaterThan(20);
    }
  });
});

/** A workflow touching most sealed columns: input, step output, checkpoint, approval request and answer, events, a workspace file. */
const touch = workflow("hostile-clear", { version: "1" }, async (ctx, input: { root: string }) => {
  const got = await ctx.step("write", { effect: true }, () => {
    writeFileSync(join(input.root, "note.txt"), "a note");
    return { wrote: "note.txt" };
  });
  const d = await ctx.approval("ship", { file: got.wrote });
  return { approved: d.approved };
});

/** Sealed as the store keeps it: `$stead1:` text, or its bytes (0xE5/0xE6 first). */
function looksSealed(v: unknown): boolean {
  if (typeof v === "string") return v.startsWith("$stead1:");
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return v[0] === 0xe5 || v[0] === 0xe6;
  return false;
}

describe.each(STORE_KINDS)("an encrypted %s store's columns", (kind) => {
  let s: OnStore | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await s?.cleanup();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("hold sealed values only where the list says sealed, and only sealed values there", async () => {
    s = await onStore(kind, "clear-columns", { encryption: { key: localKey(randomBytes(32), "the test's key") } });
    root = mkdtempSync(join(tmpdir(), "stead-clear-ws-"));
    const w = s.stead.worker({ definitions: [touch], ...FAST_WORKER });
    w.start();
    try {
      await s.stead.runs.start(touch, { root }, { id: "c-1", workspace: root, idempotencyKey: "start-c-1" });
      await s.stead.runs.waitFor("c-1", { until: (r) => r.status === "waiting", timeoutMs: 30_000, pollMs: 20 });
      await s.stead.runs.approve("c-1", "ship", { by: "ann", idempotencyKey: "approve-c-1" });
      expect((await s.stead.runs.waitFor("c-1", { timeoutMs: 30_000, pollMs: 20 })).status).toBe("completed");
    } finally {
      await w.stop({ graceMs: 500 });
    }
    const populatedSealed = new Set<string>();
    for (const table of Object.keys(SEALED_COLUMNS).concat(["tokens", "definitions", "announcements"])) {
      for (const row of await s.rows(`SELECT * FROM ${table}`)) {
        for (const [column, v] of Object.entries(row)) {
          const name = `${table}.${column}`;
          if (v === null) continue;
          if (sealed.has(name)) {
            populatedSealed.add(name);
            // Event data keeps `step` and `attempt` beside `$sealed`, and clear events whole.
            if (name === "events.data") {
              const data = (typeof v === "string" ? JSON.parse(v) : v) as Record<string, unknown>;
              if (Object.hasOwn(data, "$sealed")) expect(looksSealed(data.$sealed), `${name} is sealed`).toBe(true);
              else expect(JSON.stringify(data)).not.toContain("$stead1:");
            }
            // blobs.data is sealed bytes of its own format (sealBytes).
            else if (name !== "blobs.data") expect(looksSealed(v), `${name} is sealed`).toBe(true);
          } else expect(looksSealed(v), `${name} holds a sealed value but is not in the list of sealed columns`).toBe(false);
        }
      }
    }
    for (const c of ["runs.input", "runs.output", "steps.output", "waits.request", "waits.result", "events.data", "idempotency_keys.summary", "idempotency_keys.result", "blobs.data"]) {
      expect(populatedSealed.has(c), `the run wrote ${c}`).toBe(true);
    }
  }, 60_000);
});
