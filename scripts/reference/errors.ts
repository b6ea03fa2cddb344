/** docs/errors.md from the code table in src/errors.ts: one row per code, in the table's order. */
import { ERROR_CODES, type ErrorCodeInfo } from "../../src/errors.js";
import { EXIT } from "../../src/cli/exit-codes.js";

export function renderErrorDocs(): string {
  const rows = (Object.entries(ERROR_CODES) as [string, ErrorCodeInfo][]).map(
    ([code, info]) => `| \`${code}\` | ${cell(info.when)} | ${cell(info.action)} | ${EXIT[info.exit]} | ${info.http ?? "—"} |`,
  );
  return [
    "# Error codes",
    "",
    "<!-- Generated from the ERROR_CODES table in src/errors.ts by scripts/gen-reference.ts;",
    "     test/docs.reference.test.ts checks it. Regenerate: npm run docs -->",
    "",
    "Every failure Stead reports to a caller is a `SteadError` with a stable `code`, a `message`",
    "naming the ids involved, and a `fix` sentence for the case at hand. Codes are API: they are never",
    "renamed or reused, and a retired one is listed in CHANGELOG.md. The table is exported as",
    "`ERROR_CODES` (`import { ERROR_CODES } from \"stead\"`).",
    "",
    "- **CLI**: the `stead` command exits with the code's exit status. A command given `--json`",
    "  writes its error as one JSON line on stderr, `{\"error\":{\"code\":…,\"message\":…,\"fix\":…,\"runId\":…}}`;",
    "  otherwise as one line of text, `stead: <message> — <fix>`.",
    "- **HTTP** (`stead serve`): the response status for the code. \"—\": the code only appears in a",
    "  run's recorded `error` (or thrown into a workflow by replay), never as a refusal of a request.",
    "",
    "| code | when | what to do | exit | HTTP |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

const cell = (s: string): string => s.replace(/\|/g, "\\|");
