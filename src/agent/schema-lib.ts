import { createRequire } from "node:module";

type ProviderUtils = typeof import("@ai-sdk/provider-utils");

let loaded: ProviderUtils | undefined;

/**
 * The AI SDK's schema helpers, loaded on first use: importing them costs tens of milliseconds at
 * startup, which every worker would pay (a recovery's time to first step) even with no agent.
 */
export function schemaLib(): Pick<ProviderUtils, "asSchema" | "safeValidateTypes"> {
  loaded ??= createRequire(__filename)("@ai-sdk/provider-utils") as ProviderUtils;
  return loaded;
}
