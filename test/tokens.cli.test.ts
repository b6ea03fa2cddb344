/**
 * `stead tokens create | list | revoke`: the real CLI on a real SQLite store, read back from the
 * file. A secret is printed once and the file holds only its SHA-256; no listing, export summary
 * or error line ever prints a secret or a hash; bad input exits 2 naming the fix, with nothing changed.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, dumpStore, lines, requireBuild, tempDir } from "./cli-helpers.js";

beforeAll(() => requireBuild());

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const SECRET = /stead_[A-Za-z0-9_-]{43}/;

function tokenRows(db: string): Record<string, unknown>[] {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file.prepare("SELECT * FROM tokens ORDER BY created_at, id").all() as Record<string, unknown>[];
  } finally {
    file.close();
  }
}

describe("stead tokens", () => {
  let dir: string;
  let db: string;
  let store: string[];
  beforeAll(() => {
    dir = tempDir();
    db = join(dir, "s.db");
    store = ["--store", db];
  });

  it("create prints the secret once, with a line saying it will not be shown again; the store keeps its SHA-256", async () => {
    const r = await cli(["tokens", "create", "--role", "operator", "--name", "alice", ...store], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toBe("token alice (operator) created:");
    const secret = out[1]?.trim() ?? "";
    expect(secret).toMatch(new RegExp(`^${SECRET.source}$`));
    expect(out[2]).toMatch(/^it will not be shown again/);
    expect(out).toHaveLength(3);
    const rows = tokenRows(db);
    expect(rows).toEqual([expect.objectContaining({ name: "alice", role: "operator", hash: sha256(secret), created_by: expect.stringMatching(/^tester@/) as unknown, revoked_at: null })]);

    const j = await cli(["tokens", "create", "--role", "viewer", "--name", "dash", "--json", ...store], dir);
    expect(j.code).toBe(0);
    const made = JSON.parse(j.stdout) as { token: string; name: string; role: string; id: string };
    expect(made).toMatchObject({ name: "dash", role: "viewer", token: expect.stringMatching(SECRET) as unknown });
    expect(Object.keys(made)).not.toContain("hash");
    expect(tokenRows(db).find((t) => t.id === made.id)?.hash).toBe(sha256(made.token));
  });

  it("list shows name, role, created, last used and revoked, never a secret or a hash", async () => {
    const hashes = tokenRows(db).map((t) => String(t.hash));
    const r = await cli(["tokens", "list", ...store], dir);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toMatch(/^NAME +ROLE +CREATED +BY +LAST USED +REVOKED$/);
    expect(out.slice(1).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      ["alice", "operator"],
      ["dash", "viewer"],
    ]);
    expect(out[1]).toMatch(/never +-$/);
    const j = await cli(["tokens", "list", "--json", ...store], dir);
    const listed = JSON.parse(j.stdout) as Record<string, unknown>[];
    expect(listed.map((t) => [t.name, t.role, t.revokedAt, t.lastUsedAt])).toEqual([
      ["alice", "operator", null, null],
      ["dash", "viewer", null, null],
    ]);
    for (const text of [r.stdout, j.stdout]) {
      expect(text).not.toMatch(SECRET);
      for (const h of hashes) expect(text).not.toContain(h.slice(0, 16));
    }
  });

  it("stead export's summary names the tokens' count and never a hash", async () => {
    const hashes = tokenRows(db).map((t) => String(t.hash));
    const file = join(dir, "out.dump");
    const toFile = await cli(["export", "--out", file, ...store], dir);
    expect(toFile.code).toBe(0);
    expect(toFile.stdout).toMatch(/, tokens 2\n$/);
    const toStdout = await cli(["export", ...store], dir);
    expect(toStdout.code).toBe(0);
    expect(toStdout.stderr).toMatch(/, tokens 2\n$/);
    for (const text of [toFile.stdout, toFile.stderr, toStdout.stderr]) for (const h of hashes) expect(text).not.toContain(h.slice(0, 16));
    // The dump itself carries them, as the store keeps them: it is the store, to be kept like one.
    expect(toStdout.stdout).toContain(hashes[0]);
  });

  it("revoke records who and when; again, it says so and changes nothing", async () => {
    const r = await cli(["tokens", "revoke", "dash", ...store], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^token dash \(viewer\) revoked by tester@\S+: it is refused from now on\n$/);
    const row = tokenRows(db).find((t) => t.name === "dash");
    expect(row).toMatchObject({ revoked_by: expect.stringMatching(/^tester@/) as unknown });
    expect(Number(row?.revoked_at)).toBeGreaterThan(0);
    const before = dumpStore(db);
    const again = await cli(["tokens", "revoke", "dash", "--by", "other", ...store], dir);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^token dash was already revoked by tester@\S+ at \S+; nothing changed\n$/);
    expect(dumpStore(db)).toEqual(before);
  });

  const refusals: [string, string[], RegExp][] = [
    ["an unknown role", ["tokens", "create", "--role", "root", "--name", "bob"], /"root" is not a role; a token's role is one of viewer, operator, admin — choose viewer/],
    ["a name a token not revoked has", ["tokens", "create", "--role", "viewer", "--name", "alice"], /a token named "alice" exists and is not revoked — choose another name, or revoke that token first \(stead tokens revoke alice\)/],
    ["an invalid name", ["tokens", "create", "--role", "viewer", "--name", "a b"], /invalid token name "a b" — use 1-64 characters/],
    ["an unknown name to revoke", ["tokens", "revoke", "nobody"], /no token is named "nobody" — list tokens with `stead tokens list`/],
    ["a missing role", ["tokens", "create", "--name", "bob"], /required option '--role <role>' not specified/],
  ];

  it.each(refusals)("%s: exit 2, one line naming the fix, nothing changed", async (_what, args, message) => {
    const before = dumpStore(db);
    const r = await cli([...args, ...store], dir);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const err = lines(r.stderr);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^stead: /);
    expect(err[0]).toMatch(message);
    expect(dumpStore(db)).toEqual(before);
  });

  it("a refused create makes no store where there was none", async () => {
    const empty = tempDir();
    for (const args of [["--role", "root", "--name", "bob"], ["--role", "viewer", "--name", "-x"]]) {
      const r = await cli(["tokens", "create", ...args, "--store", join(empty, "new.db")], empty);
      expect(r.code).toBe(2);
    }
    expect(existsSync(join(empty, "new.db"))).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
  });

  it("a secret pasted into a command is never printed back", async () => {
    const made = JSON.parse((await cli(["tokens", "create", "--role", "viewer", "--name", "paste", "--json", ...store], dir)).stdout) as { token: string };
    for (const args of [["tokens", "revoke", made.token], ["status", made.token], ["tokens", "create", "--role", "viewer", "--name", made.token], ["approve", made.token, "x"], [made.token], ["ps", "--status", made.token, "--json"]]) {
      const r = await cli([...args, ...store], dir);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr + r.stdout, args.join(" ")).not.toContain(made.token.slice("stead_".length, 30));
      expect(r.stderr, args.join(" ")).toMatch(/^(stead: |\{"error":)/);
    }
  });
});
