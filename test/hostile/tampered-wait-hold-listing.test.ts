/**
 * Review 2 (item 8): the run listing marks a run whose `runs` row fails to open, but one changed
 * `waits` row (an approval's sealed request) or `holds` row (a hold's sealed reason) still fails
 * the whole listing: `stead ps` exits 7 naming that row, `stead.list()` and `GET /runs` fail, and
 * with the hold, `stead holds` too. Expected as for a runs row: the other runs listed, the
 * damaged one marked STEAD_DATA_TAMPERED.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, workflow } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen } from "../../src/server/listen.js";
import { cli, requireBuild, ROOT } from "../cli-helpers.js";
import { FAST_WORKER, tempDir } from "../helpers/temp-store.js";

const gated = (version: string) =>
  workflow("hostile-gated", { version }, async (ctx, n: number) => {
    await ctx.step("a", () => `a ${n}`);
    const d = await ctx.approval("ok", { question: `go ahead with ${n}?` });
    return ctx.step("b", () => `b ${n} ${String(d.approved)}`);
  });

/** Changes one base64url character near the end of a sealed text value. */
function changed(value: string): string {
  const i = value.length - 20;
  return value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1);
}

describe("a tampered waits or holds row in the run listing (SQLite, encrypted)", () => {
  const key = randomBytes(32);
  const encryption = () => ({ key: localKey(key, "the test's key") });
  let dir: { dir: string; remove: () => void };
  let store = "";
  let env: Record<string, string>;

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-tampered-waits-");
    store = join(dir.dir, "stead.db");
    env = { STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: join(dir.dir, "no-keys") };
    const v1 = createStead({ store, encryption: encryption() });
    const w1 = v1.worker({ definitions: [gated("1")], ...FAST_WORKER });
    w1.start();
    try {
      for (const id of ["w-a", "w-b", "w-c", "h-a"]) await v1.start(gated("1"), 1, { id });
      for (const id of ["w-a", "w-b", "w-c", "h-a"]) await v1.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
    } finally {
      await w1.stop({ graceMs: 500 });
      await v1.close();
    }
    // h-a is approved, then claimed by a worker serving version 2: held definition_changed.
    const v2 = createStead({ store, encryption: encryption() });
    await v2.approve("h-a", "ok");
    const w2 = v2.worker({ definitions: [gated("2")], ...FAST_WORKER });
    w2.start();
    try {
      await v2.waitFor("h-a", { until: (r) => r.status === "held", timeoutMs: 20_000 });
    } finally {
      await w2.stop({ graceMs: 500 });
      await v2.close();
    }
  }, 90_000);

  afterAll(() => dir.remove());

  /** Changes the row's sealed value; returns what puts it back. */
  function tamper(sql: { read: string; write: string }, id: string): () => void {
    const db = new Database(store);
    try {
      const row = db.prepare(sql.read).get(id) as { v: string };
      expect(row.v.startsWith("$stead1:")).toBe(true);
      db.prepare(sql.write).run(changed(row.v), id);
      return () => {
        const again = new Database(store);
        try {
          again.prepare(sql.write).run(row.v, id);
        } finally {
          again.close();
        }
      };
    } finally {
      db.close();
    }
  }

  async function listings(): Promise<Record<string, unknown>> {
    const stead = createStead({ store, encryption: encryption() });
    const out: Record<string, unknown> = {};
    try {
      out.list = await stead.list().then(
        (p) => p.runs.map((r) => [r.id, r.damaged?.code ?? null]),
        (e: unknown) => `refused ${(e as { code?: string }).code ?? "?"}`,
      );
      const token = (await stead.tokens.create({ name: `o${randomBytes(3).toString("hex")}`, role: "operator" })).token;
      const server = await listen({ stead, authenticate: tokensOf(stead), port: 0, maxBodyBytes: 64 * 1024 });
      try {
        const res = await fetch(`${server.url}/api/v1/runs`, { headers: { authorization: `Bearer ${token}` } });
        out.http = res.status;
      } finally {
        await server.close(1_000);
      }
    } finally {
      await stead.close();
    }
    const ps = await cli(["ps", "--json", "--store", store], ROOT, { env });
    out.ps = ps.code;
    const holds = await cli(["holds", "--store", store], ROOT, { env });
    out.holds = holds.code;
    return out;
  }

  it("a waits row: the others listed, the damaged one marked ", async () => {
    const untamper = tamper({ read: "SELECT request AS v FROM waits WHERE run_id = ?", write: "UPDATE waits SET request = ? WHERE run_id = ?" }, "w-b");
    const seen = await listings().finally(untamper);
    expect(seen).toMatchObject({ http: 200, ps: 0, holds: 0 });
    expect(seen.list).toEqual(expect.arrayContaining([["w-a", null], ["w-b", "STEAD_DATA_TAMPERED"], ["w-c", null]]));
  }, 60_000);

  it("a holds row: the others listed, the damaged one marked; stead holds lists the rest", async () => {
    const untamper = tamper({ read: "SELECT reason AS v FROM holds WHERE run_id = ?", write: "UPDATE holds SET reason = ? WHERE run_id = ?" }, "h-a");
    const seen = await listings().finally(untamper);
    expect(seen).toMatchObject({ http: 200, ps: 0, holds: 0 });
  }, 60_000);
});
