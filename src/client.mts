// The ESM entry of `stead/client`: the CommonJS build re-exported, as src/index.mts does.
export * from "./client/index.js";
