/**
 * The generated references, rendered in process from the code they describe: the `stead` CLI's
 * commander program (built, never parsed or run), the server's OpenAPI document, the error code
 * table. `npm run docs` writes them; test/docs.reference.test.ts fails when a committed one differs.
 */
import { buildProgram } from "../../src/cli/main.js";
import { openApiDocument } from "../../src/server/openapi.js";
import { ROUTES } from "../../src/server/routes/index.js";
import { renderCliReference } from "./cli.js";
import { renderErrorDocs } from "./errors.js";
import { renderHttpReference, type OpenApi } from "./http.js";

export interface Reference {
  /** Relative to the repository's root. */
  readonly path: string;
  readonly text: string;
}

export function renderReferences(): Reference[] {
  return [
    { path: "docs/reference/cli.md", text: renderCliReference(buildProgram()) },
    { path: "docs/reference/http.md", text: renderHttpReference(openApiDocument(ROUTES) as unknown as OpenApi) },
    { path: "docs/errors.md", text: renderErrorDocs() },
  ];
}
