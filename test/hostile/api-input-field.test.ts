/**
 * Issue 39, item 18: a start whose input lacks a property its definition requires is refused
 * naming that property (`body.input.<name>`, nested as deep as it is), not the input as a whole
 * (`body.input`), which said nothing of what to add. Over real HTTP on 127.0.0.1, on both stores,
 * against the input schema a real worker announced; each refusal changes nothing in the store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type Worker } from "../../src/index.js";
import { digestStore } from "../../src/store/transfer/index.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { waitUntil } from "../helpers/waiting.js";

const triage = workflow(
  "field-triage",
  { input: z.object({ issue: z.string(), owner: z.object({ name: z.string(), "team/unit": z.string() }), labels: z.array(z.object({ tag: z.string() })).optional() }) },
  async (ctx, input) => ctx.step("triage", () => input.issue),
);

describe.each(STORE_KINDS)("a missing input property over HTTP on %s", (kind) => {
  let served: Served;
  let worker: Worker;

  beforeAll(async () => {
    served = await servedStore(kind, "api-input-field");
    worker = served.s.stead.worker({ definitions: [triage], pollMs: 20, graceMs: 500, leaseMs: 3_000 });
    worker.on("error", () => undefined);
    worker.start();
    await waitUntil("the worker's announcement", async () => Number((await served.s.rows("SELECT COUNT(*) AS n FROM announcements"))[0]?.n) === 1);
  });
  afterAll(async () => {
    await worker.stop();
    await served.close();
  });

  const start = async (input: unknown) => {
    const res = await fetch(`${served.server.url}/api/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${served.tokens.operator}`, "content-type": "application/json" },
      body: JSON.stringify({ definition: "field-triage", input }),
    });
    return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> };
  };

  it("is named at body.input.<name>, nested as deep as it is missing; the store is unchanged", async () => {
    // A token's last use is marked at most once a minute: mark it now, so the digest shows any other write.
    expect((await fetch(`${served.server.url}/api/v1/definitions`, { headers: { authorization: `Bearer ${served.tokens.operator}` } })).status).toBe(200);
    const before = await digestStore(served.s.stead.store);
    const owner = { name: "ada", "team/unit": "core" };
    const cases: [unknown, string, RegExp][] = [
      [{ owner }, "body.input.issue", /\/issue: is required/],
      [{ issue: "roof", owner: { "team/unit": "core" } }, "body.input.owner.name", /\/owner\/name: is required/],
      [{ issue: "roof", owner: { name: "ada" } }, "body.input.owner.team/unit", /\/owner\/team~1unit: is required/],
      [{ issue: "roof", owner, labels: [{ tag: "a" }, {}] }, "body.input.labels.1.tag", /\/labels\/1\/tag: is required/],
      // No input at all: the input itself is what is wrong.
      [null, "body.input", /./],
      // A property of the wrong type, as before.
      [{ issue: 7, owner }, "body.input.issue", /string/],
    ];
    for (const [input, field, said] of cases) {
      const r = await start(input);
      const label = JSON.stringify(input);
      expect({ label, status: r.status, type: r.type, code: r.body.code, field: r.body.field }).toEqual({ label, status: 422, type: "application/problem+json", code: "STEAD_SCHEMA_MISMATCH", field });
      expect(String(r.body.detail), label).toMatch(said);
      expect(String(r.body.fix).length, label).toBeGreaterThan(10);
    }
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });
});
