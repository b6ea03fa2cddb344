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
