import type { Command } from "commander";
import { checkRole, checkTokenName, type Role } from "../../engine/access/index.js";
import { act, byAt, defaultBy, example, print, printJson, withStead } from "../context.js";
import { age, table } from "../format.js";

/** `stead tokens create | list | revoke`: access tokens for the server, through `stead.tokens`. */
export function registerTokens(program: Command): void {
  const tokens = program.command("tokens").description("access tokens for `stead serve`: create (shown once, stored hashed), list, revoke");

  const create = tokens
    .command("create")
    .description("create a token with a role; its secret is printed once and only its SHA-256 is stored")
    .requiredOption("--name <name>", "who or what holds it (unique among tokens not revoked)")
    .requiredOption("--role <role>", "viewer (reads), operator (also answers waits, releases holds, starts, stops, sends) or admin (also manages tokens)")
    .option("--by <who>", "who creates it (default $USER@host)")
    .option("--json", "print JSON (the secret is in its `token` field)")
    .action(
      act(async (o: { name: string; role: string; by?: string; json?: boolean }, cmd: Command) => {
        // Checked before the store is opened: a refused token creates no store.
        const name = checkTokenName(o.name);
        const role: Role = checkRole(o.role);
        await withStead(cmd, true, async (stead) => {
          const t = await stead.tokens.create({ name, role, by: o.by ?? defaultBy() });
          if (o.json) return printJson(t);
          print(`token ${t.name} (${t.role}) created:`);
          print(`  ${t.token}`);
          print("it will not be shown again: store it now (only its SHA-256 is kept, so it cannot be recovered; revoke and create another if it is lost)");
        });
      }),
    );
  example(create, "stead tokens create --role operator --name alice", "stead tokens create --role viewer --name dashboard --json");

  const list = tokens
    .command("list")
    .description("every token: name, role, created, last used (to the minute), revoked; never a secret or a hash")
    .option("--json", "print JSON")
    .action(
      act(async (o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const all = await stead.tokens.list();
          if (o.json) return printJson(all);
          if (all.length === 0) return print("no tokens; create one with: stead tokens create --role <role> --name <name>");
          print(
            table(
              ["NAME", "ROLE", "CREATED", "BY", "LAST USED", "REVOKED"],
              all.map((t) => [
                t.name,
                t.role,
                age(t.createdAt),
                t.createdBy ?? "-",
                t.lastUsedAt === null ? "never" : age(t.lastUsedAt),
                t.revokedAt === null ? "-" : `${age(t.revokedAt)}${t.revokedBy ? ` by ${t.revokedBy}` : ""}`,
              ]),
            ),
          );
        });
      }),
    );
  example(list, "stead tokens list", "stead tokens list --json");

  const revoke = tokens
    .command("revoke")
    .description("revoke a token: it is refused from now on (its record stays, and its name may be used again)")
    .argument("<name>", "the token's name (`stead tokens list`)")
    .option("--by <who>", "who revokes it (default $USER@host)")
    .option("--json", "print JSON")
    .action(
      act(async (name: string, o: { by?: string; json?: boolean }, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const r = await stead.tokens.revoke(name, { by: o.by ?? defaultBy() });
          if (o.json) return printJson(r);
          print(r.already ? `token ${r.name} was already revoked${byAt(r.revokedBy, r.revokedAt)}; nothing changed` : `token ${r.name} (${r.role}) revoked${byAt(r.revokedBy, null)}: it is refused from now on`);
        });
      }),
    );
  example(revoke, "stead tokens revoke alice");
}
