/** Access tokens' reads (ports/tokens.ts), once for every SQL store: sql/tokens.ts's statements. */
import type { TokenStore } from "../ports/tokens.js";
import { toToken, toTokenRecord } from "../rows.js";
import type { SqlDriver } from "./driver.js";
import { LIST_TOKENS, TOKEN_BY_HASH } from "./tokens.js";

export function tokenReads(d: SqlDriver): Pick<TokenStore, "listTokens" | "findTokenByHash"> {
  return {
    listTokens: async () => (await d.all(LIST_TOKENS)).map(toTokenRecord),
    async findTokenByHash(hash) {
      const [r] = await d.all(TOKEN_BY_HASH, [hash]);
      return r ? toToken(r) : undefined;
    },
  };
}
