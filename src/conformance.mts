// The ESM entry of `stead/conformance`: the CommonJS build re-exported, as src/index.mts does.
export * from "./conformance.js";
