// The ESM entry: the CommonJS build re-exported, so `import` and `require` share one copy of every
// class (`instanceof SteadError` holds across both) and one module instance of every store.
export * from "./index.js";
