/** Every route of the API, in the order the OpenAPI document lists them. */
import type { Route } from "../route-table.js";
import { CONTROL } from "./control.js";
import { DEFINITIONS } from "./definitions.js";
import { RUN_LISTING } from "./listing.js";
import { RUN_READS } from "./runs.js";
import { SESSIONS } from "./sessions.js";
import { STREAMS } from "./streams.js";
import { WORKSPACE } from "./workspace.js";

export const ROUTES: readonly Route[] = [...RUN_LISTING, ...RUN_READS, ...DEFINITIONS, ...CONTROL, ...SESSIONS, ...WORKSPACE, ...STREAMS];
