/**
 * A start by a definition's name, with no user code loaded (the CLI's `stead start`, the server):
 * the input is checked against the JSON Schema workers announced, and the run is created pending,
 * its fingerprint adopted by the worker that claims it.
 */
import { SteadError, errorMessage } from "../../errors.js";
import type { Commits, DefinitionAnnouncements, DefinitionRecord, IdempotencyKeys } from "../../store/types.js";
import { checkWorkspace } from "../../workspace/workspace-path.js";
import { DEFINITION_NAME } from "../definitions/definition.js";
import { checkChosenRunId, newRunId } from "../ids.js";
import { onceByKey, type Replayable } from "./idempotency.js";
import { inputMismatch } from "../definitions/input-schema.js";
import { jsonSchemaIssues } from "../definitions/json-schema.js";
import { encodePayload } from "../payload.js";
import { currentRecords } from "../definitions/served-definitions.js";
import { keyed, type KeyOption } from "./common.js";
import type { StartByNameResult } from "../../client/api-types.js";

export type { StartByNameResult } from "../../client/api-types.js";

export interface StartByNameOptions {
  id?: string | undefined;
  workspace?: string | undefined;
  by?: string | null | undefined;
  key?: KeyOption | undefined;
  payloadLimit: number;
  /** Migrates or checks the store; called after the request's own checks, before any read. */
  ready: () => Promise<void>;
}

/** How many names a refusal of an unknown one lists. */
const NAMES_LISTED = 10;

/**
 * Starts a run of the definition named `name`. A name no worker ever announced is refused
 * (STEAD_DEFINITION_NOT_FOUND): there is no schema to check the input against, and a misspelt
 * name would wait forever. One announced before, with no live worker now, is started: the run
 * waits, and the result says so (`served: false`).
 *
 * The input must match the schema of every fingerprint live workers serve (any of them may claim
 * the run); with none alive, that of the last one announced. The claiming worker's own schema
 * parses it again before the function runs, and has the last word.
 */
export async function startByName(store: Commits & DefinitionAnnouncements & IdempotencyKeys, name: string, input: unknown, o: StartByNameOptions): Promise<Replayable<StartByNameResult>> {
  if (typeof name !== "string" || !DEFINITION_NAME.test(name)) {
    throw new SteadError("STEAD_BAD_OPTION", `${JSON.stringify(name).slice(0, 140)} is not a definition name`, {
      fix: "name a definition as `stead definitions` lists it: 1-128 letters, digits, '_', '.', ':' or '-'",
    });
  }
  if (o.id !== undefined) checkChosenRunId(o.id);
  const encoded = encodePayload(input, `the input of ${name}`, o.payloadLimit) ?? "null";
  const stored = JSON.parse(encoded) as unknown;
  const workspace = o.workspace === undefined ? null : checkWorkspace(o.workspace);
  await o.ready();
  const records = await store.listDefinitions({ name }, Date.now());
  if (records.length === 0) throw await notAnnounced(store, name);
  const current = currentRecords(records);
  for (const r of current) checkAgainst(r, stored, current.length > 1);
  const head = current[0] as DefinitionRecord;
  const live = new Set(current.flatMap((r) => r.workers.filter((w) => w.alive).map((w) => w.workerId)));

  const by = o.by ?? null;
  // The same verb, scope and arguments as a start with the definition: either way, one run per key.
  const call = keyed(o.key, "start", name, { input: stored, id: o.id ?? null, workspace }, by);
  const started = await onceByKey<{ id: string }>(store, call, async (keyWrite) => {
    const id = o.id ?? newRunId();
    await store.createRun(
      { id, definition: name, module: head.module, fingerprint: null, input: encoded, createdAt: Date.now(), workspace },
      [{ type: "run.created", data: { definition: name, fingerprint: null, byName: true, ...(by ? { by } : {}) } }],
      keyWrite?.({ id }),
    );
    return { id, already: false };
  });
  return { id: started.id, already: started.already, served: live.size > 0, workers: live.size };
}

function checkAgainst(r: DefinitionRecord, input: unknown, several: boolean): void {
  if (r.inputSchema === null) return;
  const fix = `send an input that matches it (see it with \`stead definitions --json\`)`;
  let schema: unknown;
  try {
    schema = JSON.parse(r.inputSchema);
  } catch (e) {
    throw unusable(r, errorMessage(e));
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) throw unusable(r, "it is not a JSON object");
  let issues;
  try {
    issues = jsonSchemaIssues(schema, input);
  } catch (e) {
    throw unusable(r, errorMessage(e));
  }
  if (issues.length > 0) throw inputMismatch(r.name, issues, { fix: several ? `${fix}; live workers serve fingerprints with different schemas, and it must match each` : fix, fingerprint: r.fingerprint });
}

function unusable(r: DefinitionRecord, why: string): SteadError {
  return new SteadError("STEAD_INVALID_DEFINITION", `the input schema announced for "${r.name}" (fingerprint ${r.fingerprint}) cannot be used: ${why}`, {
    definition: r.name,
    fingerprint: r.fingerprint,
    fix: "fix the definition's input schema and restart the workers that serve it",
  });
}

async function notAnnounced(store: Commits & DefinitionAnnouncements & IdempotencyKeys, name: string): Promise<SteadError> {
  const names = [...new Set((await store.listDefinitions({}, Date.now())).map((r) => r.name))];
  const known = names.length === 0 ? "no worker has announced any yet" : `known: ${names.slice(0, NAMES_LISTED).join(", ")}${names.length > NAMES_LISTED ? `, and ${names.length - NAMES_LISTED} more` : ""}`;
  return new SteadError("STEAD_DEFINITION_NOT_FOUND", `no worker has announced a definition named "${name}" (${known})`, {
    definition: name,
    fix: "start a worker that serves it (`stead worker <file>`), then start it by name; or start it from its file with `stead run <file> --detach`",
  });
}
