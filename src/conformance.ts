// `stead/conformance`: the Store conformance suite, for a store of your own (see src/store/README.md).
// It loads no test runner and no store: give it your test functions and a factory of your store.
export * from "./store/conformance/index.js";
