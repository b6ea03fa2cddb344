/**
 * Access tokens through the control API (`stead.tokens`), on a real SQLite file and a real
 * Postgres database: what is stored (the SHA-256, never the secret) is read from the database
 * itself; verification says whose token it is or why not; bad input changes nothing.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SteadError } from "../src/index.js";
import { TOKEN_TOUCH_INTERVAL_MS } from "../src/engine/access/index.js";
import { exportStore, importStore, verifyStores } from "../src/store/transfer/index.js";
import { BOTH_STORES, onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { withClient } from "./setup/databases.js";
import { caught } from "./helpers/waiting.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const SHAPE = /^stead_[A-Za-z0-9_-]{43}$/;

describe.each(STORE_KINDS)("tokens on %s", (kind) => {
  let s: OnStore;
  afterEach(async () => {
    await s.cleanup();
  });

  const open = async (label: string) => {
    s = await onStore(kind, `tokens-${label}`);
    return s;
  };
  const tokenRows = () => s.rows("SELECT * FROM tokens ORDER BY created_at, id");

  /** Ages a token's last-use mark by `ms`, straight in the database. */
  async function age(id: string, ms: number): Promise<void> {
    if (s.kind === "sqlite") {
      const db = new Database(s.location);
      try {
        db.prepare("UPDATE tokens SET last_used_at = last_used_at - ? WHERE id = ?").run(ms, id);
      } finally {
        db.close();
      }
    } else await withClient(s.location, (c) => c.query("UPDATE tokens SET last_used_at = last_used_at - $1 WHERE id = $2", [ms, id]));
  }

  it("a new token's secret is shown once: the store holds its SHA-256 and never the secret", async () => {
    const { stead } = await open("create");
    const made = await stead.tokens.create({ name: "alice", role: "operator", by: "root@box" });
    expect(made.token).toMatch(SHAPE);
    expect(made).toMatchObject({ name: "alice", role: "operator", createdBy: "root@box", revokedAt: null, lastUsedAt: null });
    expect(Object.keys(made)).not.toContain("hash");

    const rows = await tokenRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: made.id, name: "alice", role: "operator", hash: sha256(made.token), created_by: "root@box", revoked_at: null });
    for (const v of Object.values(rows[0] ?? {})) expect(String(v)).not.toContain(made.token.slice("stead_".length));

    const list = await stead.tokens.list();
    expect(list.map((t) => [t.name, t.role, t.createdBy])).toEqual([["alice", "operator", "root@box"]]);
    expect(JSON.stringify(list)).not.toContain(sha256(made.token));

    if (s.kind === "sqlite") {
      // The whole file, once its WAL is checkpointed by the close: the hash is there, the secret nowhere.
      await stead.close();
      const bytes = readFileSync(s.location);
      expect(bytes.includes(Buffer.from(sha256(made.token)))).toBe(true);
      expect(bytes.includes(Buffer.from(made.token.slice("stead_".length)))).toBe(false);
    }
  });

  it("verify names the token's owner and role, and refuses a missing, malformed, unknown or revoked one", async () => {
    const { stead } = await open("verify");
    const alice = await stead.tokens.create({ name: "alice", role: "operator" });
    const vera = await stead.tokens.create({ name: "vera", role: "viewer" });
    expect(await stead.tokens.verify(alice.token)).toEqual({ ok: true, token: { id: alice.id, name: "alice", role: "operator" } });
    expect(await stead.tokens.verify(vera.token)).toEqual({ ok: true, token: { id: vera.id, name: "vera", role: "viewer" } });

    const body = alice.token.slice(6);
    // The last of 43 base64url characters carries 4 bits of the 32 bytes and 2 zero bits: setting
    // one of those decodes to the same bytes, a second spelling of the secret, which is refused.
    const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = `stead_${body.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(body.slice(-1)) + 1] ?? ""}`;
    expect(Buffer.from(twin.slice(6), "base64url").equals(Buffer.from(body, "base64url"))).toBe(true);
    const malformed: unknown[] = [`Stead_${body}`, body, `stead_${body.slice(1)}`, `stead_${body}A`, ` ${alice.token}`, `${alice.token}\n`, twin, `stead_${"=".repeat(43)}`, 42, { token: alice.token }];
    for (const m of malformed) expect(await stead.tokens.verify(m), JSON.stringify(m)).toEqual({ ok: false, reason: "malformed" });
    for (const missing of [undefined, null, ""]) expect(await stead.tokens.verify(missing)).toEqual({ ok: false, reason: "missing" });
    expect(await stead.tokens.verify(`stead_${randomBytes(32).toString("base64url")}`)).toEqual({ ok: false, reason: "unknown" });

    await stead.tokens.revoke("alice", { by: "root" });
    expect(await stead.tokens.verify(alice.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await stead.tokens.verify(vera.token)).toMatchObject({ ok: true });
  });

  it("a use marks last_used_at at most once per interval", async () => {
    const { stead } = await open("touch");
    const t = await stead.tokens.create({ name: "bot", role: "viewer" });
    expect((await tokenRows())[0]?.last_used_at).toBeNull();
    await stead.tokens.verify(t.token);
    const first = Number((await tokenRows())[0]?.last_used_at);
    expect(first).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) await stead.tokens.verify(t.token);
    expect(Number((await tokenRows())[0]?.last_used_at)).toBe(first);

    await age(t.id, TOKEN_TOUCH_INTERVAL_MS + 1);
    await stead.tokens.verify(t.token);
    expect(Number((await tokenRows())[0]?.last_used_at)).toBeGreaterThanOrEqual(first);
    expect((await stead.tokens.list())[0]?.lastUsedAt).toBe(Number((await tokenRows())[0]?.last_used_at));
  });

  it("bad input is refused naming the fix, and nothing is written", async () => {
    const { stead } = await open("refusals");
    await stead.tokens.create({ name: "alice", role: "operator" });
    const before = await tokenRows();

    const cases: [() => Promise<unknown>, string, RegExp][] = [
      [() => stead.tokens.create({ name: "alice", role: "viewer" }), "STEAD_ID_TAKEN", /a token named "alice" exists and is not revoked/],
      [() => stead.tokens.create({ name: "bob", role: "root" as "admin" }), "STEAD_BAD_OPTION", /"root" is not a role/],
      [() => stead.tokens.create({ name: "", role: "viewer" }), "STEAD_BAD_OPTION", /invalid token name ""/],
      [() => stead.tokens.create({ name: "has space", role: "viewer" }), "STEAD_BAD_OPTION", /invalid token name "has space"/],
      [() => stead.tokens.create({ name: "-flag", role: "viewer" }), "STEAD_BAD_OPTION", /invalid token name/],
      [() => stead.tokens.revoke("nobody"), "STEAD_TOKEN_NOT_FOUND", /no token is named "nobody"/],
    ];
    for (const [call, code, message] of cases) {
      const e = await caught(call);
      expect(e).toBeInstanceOf(SteadError);
      expect(e, String(message)).toMatchObject({ code, message: expect.stringMatching(message) as unknown });
      expect((e as SteadError).fix).toBeTruthy();
      expect(await tokenRows()).toEqual(before);
    }
  });

  it("a revoked name may be taken again; revoking again says who revoked it, and changes nothing", async () => {
    const { stead } = await open("revoke");
    const first = await stead.tokens.create({ name: "alice", role: "operator" });
    const r = await stead.tokens.revoke("alice", { by: "root" });
    expect(r).toMatchObject({ id: first.id, name: "alice", revokedBy: "root", already: false });
    const rowsAfter = await tokenRows();
    expect(await stead.tokens.revoke("alice", { by: "someone-else" })).toMatchObject({ id: first.id, revokedBy: "root", already: true });
    expect(await tokenRows()).toEqual(rowsAfter);

    const second = await stead.tokens.create({ name: "alice", role: "admin" });
    expect(await stead.tokens.verify(second.token)).toMatchObject({ ok: true, token: { name: "alice", role: "admin" } });
    expect(await stead.tokens.verify(first.token)).toEqual({ ok: false, reason: "revoked" });
    expect((await tokenRows()).map((t) => [t.id, t.name, t.revoked_at === null])).toEqual([
      [first.id, "alice", false],
      [second.id, "alice", true],
    ]);
  });

  it("a secret passed where a name goes is never echoed in the error", async () => {
    const { stead } = await open("echo");
    const t = await stead.tokens.create({ name: "alice", role: "operator" });
    for (const call of [() => stead.tokens.revoke(t.token), () => stead.tokens.create({ name: t.token, role: "viewer" }), () => stead.runs.get(t.token)]) {
      const e = (await caught(call)) as SteadError;
      expect(e).toBeInstanceOf(SteadError);
      expect(JSON.stringify({ message: e.message, fix: e.fix, details: e.details })).not.toContain(t.token.slice(6, 30));
    }
  });
});

/**
 * Export and import carry tokens: a store moved to another machine or dialect must keep its
 * access (every client's token) and its record of who made and revoked each. The dump holds the
 * hashes, as the store does, never a secret.
 */
describe.skipIf(!BOTH_STORES)("a moved store keeps its tokens", () => {
  it("SQLite to Postgres: the same secrets verify, the revoked one stays revoked, the rows are equal", async () => {
    const from = await onStore("sqlite", "tokens-move-from");
    const to = await onStore("postgres", "tokens-move-to");
    try {
      const alice = await from.stead.tokens.create({ name: "alice", role: "operator", by: "root" });
      const old = await from.stead.tokens.create({ name: "old", role: "admin", by: "root" });
      await from.stead.tokens.verify(alice.token);
      await from.stead.tokens.revoke("old", { by: "root" });

      const chunks: string[] = [];
      const out = new Writable({
        write(chunk: Buffer | string, _enc, cb) {
          chunks.push(chunk.toString());
          cb();
        },
      });
      const summary = await exportStore(from.stead.store, out);
      expect(summary.tables.tokens.rows).toBe(2);
      const dump = chunks.join("");
      expect(dump).toContain(sha256(alice.token));
      expect(dump).not.toContain(alice.token.slice(6));
      expect(dump).not.toContain(old.token.slice(6));

      await importStore(to.stead.store, () => Readable.from([Buffer.from(dump)]), { withTokens: true });
      expect((await verifyStores(from.stead.store, to.stead.store)).equal).toBe(true);
      expect(await to.rows("SELECT id, name, role, hash, created_by, revoked_by FROM tokens ORDER BY name")).toEqual(
        await from.rows("SELECT id, name, role, hash, created_by, revoked_by FROM tokens ORDER BY name"),
      );
      expect(await to.stead.tokens.verify(alice.token)).toEqual({ ok: true, token: { id: alice.id, name: "alice", role: "operator" } });
      expect(await to.stead.tokens.verify(old.token)).toEqual({ ok: false, reason: "revoked" });
      await expect(to.stead.tokens.create({ name: "alice", role: "viewer" })).rejects.toMatchObject({ code: "STEAD_ID_TAKEN" });
    } finally {
      await from.cleanup();
      await to.cleanup();
    }
  });
});
