import type { Command } from "commander";
import { SteadError } from "../../errors.js";
import { createStead } from "../../stead/create-stead.js";
import { defaultKeyDir, discardKey, keyFileIn, keyToUse, type KeyRotation, type KeysStatus } from "../../stead/keys.js";
import { act, example, print, printJson, storeOption, withStead } from "../context.js";
import { age, table } from "../format.js";

const KEEP_IT = (path: string) =>
  `back ${path} up now, apart from the store: without it the store cannot be read. Every machine that opens the store needs it, in its key directory (${defaultKeyDir()}) or named by STEAD_ENCRYPTION_KEY_FILE`;

/** `stead keys init | status | rotate`: encryption at rest. */
export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("encryption at rest: set a new store up encrypted, see its keys, rotate them");

  const init = keys
    .command("init")
    .description("encrypt a new store (one with no runs): a new key file in the key directory, or --key-file, or STEAD_ENCRYPTION_KEY(_FILE)")
    .option("--key-file <path>", "the key file to use (made if missing) instead of a new one in the key directory")
    .option("--json", "print JSON")
    .action(
      act(async (o: { keyFile?: string; json?: boolean }, cmd: Command) => {
        const store = storeOption(cmd);
        const { key, created } = keyToUse({ ...(o.keyFile === undefined ? {} : { keyFile: o.keyFile }), keyDir: defaultKeyDir() });
        const stead = createStead({ ...(store === undefined ? {} : { store }), encryption: { key } });
        try {
          await stead.ready();
          const status = await stead.keys.status();
          if (!status.keys.every((k) => k.kekId === key.id)) {
            throw new SteadError("STEAD_BAD_OPTION", `the store ${stead.location} is encrypted already, with key ${status.keys[0]?.kekId ?? "?"}; nothing changed`, {
              fix: "see its keys with `stead keys status`; change its key with `stead keys rotate`",
            });
          }
          if (o.json) return printJson({ store: stead.location, kekId: key.id, keyFile: key.where, created: created !== null, ...status });
          print(`the store ${stead.location} is encrypted with key ${key.id} (${key.where})`);
          if (created) print(KEEP_IT(created));
        } catch (e) {
          discardKey(created);
          throw e;
        } finally {
          await stead.close();
        }
      }),
    );
  example(init, "stead keys init", "stead keys init --key-file /secure/stead.key --store postgres://…");

  const status = keys
    .command("status")
    .description("whether the store is encrypted; its keys, the key that wraps each, and whether this machine holds it")
    .option("--json", "print JSON")
    .action(
      act(async (o: { json?: boolean }, cmd: Command) => {
        // Not withStead: a store this machine lacks the key of does not open, and that is what status reports.
        const store = storeOption(cmd);
        const stead = createStead({ ...(store === undefined ? {} : { store }), create: false, readonly: true });
        try {
          const s = await stead.keys.status();
          if (o.json) return printJson(s);
          if (!s.encrypted) return print(`the store ${stead.location} is not encrypted (a new one is: stead keys init)`);
          print(`the store ${stead.location} is encrypted; new values are sealed by data key ${s.active ?? "-"}`);
          print(table(["KEY", "FOR", "WRAPPED BY", "HELD HERE BY", "CREATED"], s.keys.map((k) => [k.id, k.purpose, k.kekId, k.heldBy ?? "-", age(k.createdAt)])));
          for (const line of heldLines(s)) print(line);
        } finally {
          await stead.close();
        }
      }),
    );
  example(status, "stead keys status", "stead keys status --json");

  const rotate = keys
    .command("rotate")
    .description("wrap every key of the store by a new key (a new file in the key directory, or --key-file) and seal new values by a new data key; no stored value is rewritten")
    .option("--key-file <path>", "the new key file (made if missing) instead of a new one in the key directory")
    .option("--json", "print JSON")
    .action(
      act(async (o: { keyFile?: string; json?: boolean }, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const { key, created } = keyToUse({ ...(o.keyFile === undefined ? {} : { keyFile: o.keyFile }), keyDir: defaultKeyDir(), fromEnv: false });
          let r: KeyRotation;
          try {
            r = await stead.keys.rotate(key);
          } catch (e) {
            discardKey(created);
            throw e;
          }
          if (o.json) return printJson({ kekId: key.id, keyFile: key.where, ...r });
          print(`rotated: ${r.rewrapped} keys now wrapped by ${key.id} (${key.where}); new values are sealed by data key ${r.dataKey}`);
          print(`the old key (${r.from.join(", ")}) is no longer needed to open the store; keep it as long as you keep backups taken before now`);
          if (created) print(KEEP_IT(created));
        });
      }),
    );
  example(rotate, "stead keys rotate", "stead keys rotate --key-file /secure/stead-2027.key");
}

/** Whether this machine holds each key-encryption key the store's keys are wrapped by, and what to do where it does not. */
function heldLines(s: KeysStatus): string[] {
  const byKek = new Map(s.keys.map((k) => [k.kekId, k.heldBy]));
  return [...byKek].map(([kekId, heldBy]) => {
    if (heldBy === null) {
      return `this machine does not hold key ${kekId}, so the store does not open here: put its key file at ${keyFileIn(s.keyDir, kekId)} (the key directory), or set STEAD_ENCRYPTION_KEY_FILE to it (or STEAD_ENCRYPTION_KEY to the key)`;
    }
    if (!s.held) return `${heldBy} is named for key ${kekId} but does not unwrap the store's keys: put the key ${kekId} there (the store does not open here until then)`;
    return `this machine holds key ${kekId} (${heldBy})`;
  });
}
