/**
 * A store given to createStead as an object (a store of one's own) is checked when Stead opens
 * it: the core must be all there, and each capability port all there or all absent. An absent
 * capability's members are answered with STEAD_STORE_CAPABILITY_MISSING, naming the port and what
 * needs it, so a store that does without tokens still runs workflows, and `stead serve` over it
 * says why it cannot sign anyone in instead of failing on `undefined is not a function`.
 */
import { SteadError } from "../errors.js";
import { layeredStore } from "./layered-store.js";
import { CAPABILITIES, CORE_MEMBERS, type Capability } from "./ports/core.js";
import type { Store } from "./ports/store.js";

const has = (store: object, member: string): boolean => typeof (store as Record<string, unknown>)[member] === "function";

function incomplete(missing: readonly string[], what: string): SteadError {
  return new SteadError("STEAD_STORE_INCOMPLETE", `the store given to createStead lacks ${missing.join(", ")}: ${what}`, {
    fix: "implement them (stead/conformance's cases test each port), or give createStead a path or a postgres:// URL for a built-in store",
  });
}

/** The capability ports `store` implements. */
export function capabilitiesOf(store: object): Capability[] {
  return (Object.keys(CAPABILITIES) as Capability[]).filter((c) => CAPABILITIES[c].members.every((m) => has(store, m)));
}

/** `store` checked (see above), its absent capabilities answering with a refusal that names them. */
export function checkedStore(store: object): Store {
  const core = CORE_MEMBERS.filter((m) => !has(store, m));
  if (core.length > 0) throw incomplete(core, "every store needs the core a worker claims, commits and reads runs with");
  const own = new Map<PropertyKey, unknown>();
  for (const [name, port] of Object.entries(CAPABILITIES) as [Capability, (typeof CAPABILITIES)[Capability]][]) {
    const missing = port.members.filter((m) => !has(store, m));
    if (missing.length === 0) continue;
    if (missing.length < port.members.length) throw incomplete(missing, `a port is implemented whole or not at all, and these belong to ${name}`);
    for (const m of port.members) {
      own.set(m, () =>
        Promise.reject(
          new SteadError("STEAD_STORE_CAPABILITY_MISSING", `this store does not implement ${name} (${port.members.join(", ")}), which ${port.needed} need`, {
            fix: `use a built-in store (SQLite or Postgres) for ${port.needed}, or implement ${name} (stead/conformance's "${name}" cases test it)`,
          }),
        ),
      );
    }
  }
  return own.size === 0 ? (store as Store) : layeredStore(store as Store, own);
}
