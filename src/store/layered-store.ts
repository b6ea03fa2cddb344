/**
 * A layer over a store (redaction, encryption): a proxy whose members are the layer's own where it
 * has one, and the store's otherwise, each function bound to the store once.
 *
 * Invariant: a member assigned from outside (an observer wrapping what it read, as the worker's
 * commit timing does) takes the place of the layer's own, which it calls; one the layer does not
 * have is set on the store. `computed` members are read-only views of the layer's state.
 */
export function layeredStore<T extends object>(store: T, own: Map<PropertyKey, unknown>, computed: ReadonlyMap<PropertyKey, () => unknown> = new Map()): T {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const view = computed.get(prop);
      if (view) return view();
      if (own.has(prop)) return own.get(prop);
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      let b = bound.get(prop);
      if (b === undefined) bound.set(prop, (b = (v as (...a: unknown[]) => unknown).bind(target)));
      return b;
    },
    set(target, prop, value) {
      if (own.has(prop)) own.set(prop, value);
      else if (!computed.has(prop)) {
        bound.delete(prop);
        Reflect.set(target, prop, value, target);
      }
      return true;
    },
  });
}

/**
 * A layer's decision for every member of the store beneath it, optional ones included: `wraps`
 * (the layer's own member handles what passes through it) or one of the layer's reasons for
 * letting the member through untouched. Typed over every key of `T`, so a member added to the
 * Store interface is a type error in each layer until that layer decides: a new read that returns
 * payloads cannot hand out ciphertext, or skip a check, by being forgotten.
 */
export type LayerDecisions<T, Through extends string> = { readonly [K in keyof T]-?: "wraps" | Through };

/** The members a layer's decisions say it wraps: its `own` members must be exactly these. */
export type Wrapped<D> = { [K in keyof D]: D[K] extends "wraps" ? K : never }[keyof D];
