// `stead/conformance`: the Store conformance suite, for a store of your own (see src/store/README.md).
// It loads no test runner and no store: give it your test functions and a factory of your store.
export * from "./store/conformance/index.js";
// A store's author needs the whole contract with the engine: the ports, the rows and the write
// protocol. They are public here, for that audience, and not from `stead` (they change with the engine).
export type * from "./store/types.js";
