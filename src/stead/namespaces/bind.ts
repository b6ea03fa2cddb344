/**
 * How an instance's namespaces reach the bodies of its flat methods, and how the flat methods
 * (kept for one release) warn. Invariant: a namespace's verb calls the body as it was before the
 * flat method was wrapped, so no path through a namespace ever warns.
 */
import type { Store } from "../../store/types.js";

/** What a verb written here (not a flat method's body) needs of the instance. */
export interface StoreHost {
  ready(): Promise<void>;
  readonly store: Store;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any body, whatever it takes
type Body = (...args: any[]) => unknown;

/**
 * For each verb of namespace `N`, the name of the method of `T` that holds its body; a name whose
 * method's type does not fit the verb's is a type error (checked where `T`, the class, is known).
 */
export type VerbsOf<T, N> = { readonly [K in keyof N]: { [F in keyof T]: T[F] extends N[K] ? F : never }[keyof T] };

/** The flat methods' bodies, unwrapped, by name: filled once, when the class is defined. */
const bodies = new Map<string, Body>();
const warned = new Set<string>();

/** The DeprecationWarning of a flat method: once per name per process. */
export function warnFlat(name: string, spelling: string): void {
  if (warned.has(name)) return;
  warned.add(name);
  process.emitWarning(`stead.${name}() is deprecated: use stead.${spelling}()`, { type: "DeprecationWarning", code: "STEAD_DEP_FLAT_METHOD" });
}

/**
 * Wraps each method `proto` has under a flat name of `namespaces` (namespace, verb, flat name) by
 * one that warns and calls it, keeping the body for `bindVerbs`. Called once per class.
 */
export function deprecateFlatMethods(proto: object, namespaces: Readonly<Record<string, Readonly<Record<string, string>>>>): void {
  const methods = proto as Record<string, Body>;
  for (const [namespace, verbs] of Object.entries(namespaces)) {
    for (const [verb, name] of Object.entries(verbs)) {
      const body = methods[name];
      if (typeof body !== "function" || bodies.has(name)) throw new Error(`stead.${name} is no method to deprecate, or is deprecated twice`);
      bodies.set(name, body);
      const spelling = `${namespace}.${verb}`;
      methods[name] = function (this: unknown, ...args: unknown[]) {
        warnFlat(name, spelling);
        return body.apply(this, args);
      };
    }
  }
}

/** The verbs of one namespace of `target`: each its flat method's body (unwrapped), bound to `target`. */
export function bindVerbs<T extends object, N>(target: T, verbs: VerbsOf<T, N>): N {
  const bound: Record<string, Body> = {};
  for (const [verb, name] of Object.entries(verbs as Record<string, string>)) {
    const body = bodies.get(name);
    if (!body) throw new Error(`stead.${name} has no body: deprecateFlatMethods has not run on its class`);
    bound[verb] = body.bind(target);
  }
  return bound as N;
}

/**
 * A namespace whose name was a flat method (`stead.holds()`): callable for one release, warning
 * once and calling its new spelling, and frozen, as every namespace is.
 */
export function callableNamespace<N extends object, F extends Body>(members: N, name: string, spelling: string, call: F): Readonly<N> & F {
  const flat = function (this: unknown, ...args: Parameters<F>) {
    warnFlat(name, spelling);
    return call(...args);
  };
  return Object.freeze(Object.assign(flat, members)) as unknown as Readonly<N> & F;
}
