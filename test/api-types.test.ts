/**
 * The HTTP API's shapes (src/client/api-types.ts) hold the server and the client together. The
 * type assertions below are checked by `npm run typecheck` (tsc includes test/): a route whose
 * handler answers other than the client declares, a client method declared other than its route
 * answers, or a wire copy that drifts from the store's original fails the typecheck. The runtime
 * tests check that every JSON route of the server is declared and no declared one is gone.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type * as wire from "../src/client/api-types.js";
import type { ApiBody, ApiResponse, ApiRoute } from "../src/client/api-types.js";
import type { SteadClient } from "../src/client/index.js";
import type { Role } from "../src/engine/access/roles.js";
import type { RunSnapshots, SnapshotFiles, SnapshotView } from "../src/engine/runs/snapshots.js";
import { AUTH_ME_PATH } from "../src/server/browser-auth.js";
import type { Route } from "../src/server/route-table.js";
import type { CONTROL } from "../src/server/routes/control.js";
import type { DEFINITIONS } from "../src/server/routes/definitions.js";
import { ROUTES } from "../src/server/routes/index.js";
import type { RUN_LISTING } from "../src/server/routes/listing.js";
import type { RUN_READS } from "../src/server/routes/runs.js";
import type { SESSIONS } from "../src/server/routes/sessions.js";
import type { STREAMS } from "../src/server/routes/streams.js";
import type { WORKSPACE } from "../src/server/routes/workspace.js";
import type { cancelBody, decision, denial, forkBody, releaseBody, resumeBody, signalBody } from "../src/server/schemas.js";
import type { startRequest } from "../src/server/start-request.js";
import type { HoldKind, RunDamage, RunStatus, WaitKind } from "../src/store/types.js";
import type { StoreTally } from "../src/store/ports/tallies.js";
import type { TreeDiff } from "../src/workspace/diff.js";

type TableRoute = (typeof RUN_LISTING)[number] | (typeof RUN_READS)[number] | (typeof DEFINITIONS)[number] | (typeof CONTROL)[number] | (typeof SESSIONS)[number] | (typeof WORKSPACE)[number] | (typeof STREAMS)[number];

/** What the server's handler of `METHOD /path` answers, as the type checker infers it from the route table. */
type Served<K extends ApiRoute> = K extends `${infer M} ${infer P}` ? (Extract<TableRoute, { method: M; path: P }> extends Route<unknown, unknown, unknown, infer _M, infer _P, infer R> ? R : never) : never;

/** An intersection's fields as one object type (expect-type tells `A & B` from the object it equals). */
type Fields<T> = { [K in keyof T]: T[K] };

type Answer<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

describe("the API's shapes", () => {
  it("each main route's handler answers exactly what the client's method declares", () => {
    expectTypeOf<Served<"GET /runs">>().toEqualTypeOf<ApiResponse<"GET /runs">>();
    expectTypeOf<Answer<SteadClient["runs"]["list"]>>().toEqualTypeOf<ApiResponse<"GET /runs">>();

    // Two answers by `journal`: the server's union of the two, the client's by overload.
    expectTypeOf<Served<"GET /runs/:runId">>().toExtend<ApiResponse<"GET /runs/:runId">>();
    expectTypeOf<Extract<Served<"GET /runs/:runId">, { journal: unknown[] }>>().toExtend<wire.RunDetail>();
    expectTypeOf<Extract<Served<"GET /runs/:runId">, { journalLength: number }>>().toExtend<wire.RunDetailWithoutJournal>();
    expectTypeOf<wire.RunDetail>().toExtend<Omit<Extract<Served<"GET /runs/:runId">, { journal: unknown[] }>, "journalLength">>();
    expectTypeOf<wire.RunDetailWithoutJournal>().toExtend<Omit<Extract<Served<"GET /runs/:runId">, { journalLength: number }>, "journal">>();
    type Get = SteadClient["runs"]["get"];
    expectTypeOf<Get>().toExtend<(runId: string) => Promise<wire.RunDetail>>();
    expectTypeOf<Get>().toExtend<(runId: string, o: { journal: false }) => Promise<wire.RunDetailWithoutJournal>>();

    expectTypeOf<Served<"GET /runs/:runId/journal">>().toEqualTypeOf<ApiResponse<"GET /runs/:runId/journal">>();
    expectTypeOf<Answer<SteadClient["runs"]["journal"]>>().toEqualTypeOf<ApiResponse<"GET /runs/:runId/journal">>();

    expectTypeOf<Served<"GET /runs/:runId/events">>().toEqualTypeOf<ApiResponse<"GET /runs/:runId/events">>();
    expectTypeOf<Answer<SteadClient["runs"]["eventPage"]>>().toEqualTypeOf<ApiResponse<"GET /runs/:runId/events">>();

    expectTypeOf<Served<"GET /sessions">>().toEqualTypeOf<ApiResponse<"GET /sessions">>();
    expectTypeOf<Answer<SteadClient["sessions"]["list"]>>().toEqualTypeOf<ApiResponse<"GET /sessions">>();
    expectTypeOf<Served<"GET /sessions/:sessionId">>().toEqualTypeOf<ApiResponse<"GET /sessions/:sessionId">>();
    expectTypeOf<Answer<SteadClient["sessions"]["get"]>>().toEqualTypeOf<ApiResponse<"GET /sessions/:sessionId">>();
    expectTypeOf<Served<"GET /sessions/:sessionId/transcript">>().toEqualTypeOf<ApiResponse<"GET /sessions/:sessionId/transcript">>();
    expectTypeOf<Answer<SteadClient["sessions"]["transcript"]>>().toEqualTypeOf<ApiResponse<"GET /sessions/:sessionId/transcript">>();
    expectTypeOf<Served<"POST /sessions/:sessionId/messages">>().toEqualTypeOf<ApiResponse<"POST /sessions/:sessionId/messages">>();
    expectTypeOf<Answer<SteadClient["sessions"]["send"]>>().toEqualTypeOf<ApiResponse<"POST /sessions/:sessionId/messages">>();

    expectTypeOf<Served<"GET /definitions">>().toEqualTypeOf<ApiResponse<"GET /definitions">>();
    expectTypeOf<Answer<SteadClient["definitions"]["list"]>>().toEqualTypeOf<ApiResponse<"GET /definitions">>();
    expectTypeOf<Served<"GET /workers">>().toEqualTypeOf<ApiResponse<"GET /workers">>();
    expectTypeOf<Answer<SteadClient["definitions"]["workers"]>>().toEqualTypeOf<ApiResponse<"GET /workers">>();

    expectTypeOf<Served<"GET /waits">>().toEqualTypeOf<ApiResponse<"GET /waits">>();
    expectTypeOf<Answer<SteadClient["waits"]["list"]>>().toEqualTypeOf<ApiResponse<"GET /waits">>();
    expectTypeOf<Served<"GET /holds">>().toEqualTypeOf<ApiResponse<"GET /holds">>();
    expectTypeOf<Answer<SteadClient["holds"]["list"]>>().toEqualTypeOf<ApiResponse<"GET /holds">>();
    expectTypeOf<Served<"GET /tally">>().toEqualTypeOf<ApiResponse<"GET /tally">>();
    expectTypeOf<Answer<SteadClient["tally"]>>().toEqualTypeOf<ApiResponse<"GET /tally">>();
    expectTypeOf<Answer<SteadClient["me"]>>().toEqualTypeOf<ApiResponse<"GET /auth/me">>();
  });

  it("each control command's handler answers exactly what the client's method declares", () => {
    expectTypeOf<Served<"POST /runs">>().toEqualTypeOf<ApiResponse<"POST /runs">>();
    expectTypeOf<Answer<SteadClient["runs"]["start"]>>().toEqualTypeOf<ApiResponse<"POST /runs">>();
    expectTypeOf<Served<"POST /runs/:runId/waits/:wait/approve">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/approve">>();
    expectTypeOf<Answer<SteadClient["runs"]["approve"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/approve">>();
    expectTypeOf<Served<"POST /runs/:runId/waits/:wait/deny">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/deny">>();
    expectTypeOf<Answer<SteadClient["runs"]["deny"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/deny">>();
    expectTypeOf<Served<"POST /runs/:runId/waits/:wait/signal">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/signal">>();
    expectTypeOf<Answer<SteadClient["runs"]["signal"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/waits/:wait/signal">>();
    expectTypeOf<Served<"POST /runs/:runId/release">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/release">>();
    expectTypeOf<Answer<SteadClient["runs"]["release"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/release">>();
    expectTypeOf<Served<"POST /runs/:runId/pause">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/pause">>();
    expectTypeOf<Answer<SteadClient["runs"]["pause"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/pause">>();
    expectTypeOf<Served<"POST /runs/:runId/resume">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/resume">>();
    expectTypeOf<Answer<SteadClient["runs"]["resume"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/resume">>();
    expectTypeOf<Served<"POST /runs/:runId/retry">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/retry">>();
    expectTypeOf<Answer<SteadClient["runs"]["retry"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/retry">>();
    expectTypeOf<Served<"POST /runs/:runId/cancel">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/cancel">>();
    expectTypeOf<Answer<SteadClient["runs"]["cancel"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/cancel">>();
    expectTypeOf<Served<"POST /runs/:runId/fork">>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/fork">>();
    expectTypeOf<Answer<SteadClient["runs"]["fork"]>>().toEqualTypeOf<ApiResponse<"POST /runs/:runId/fork">>();
    expectTypeOf<Served<"GET /events/position">>().toEqualTypeOf<ApiResponse<"GET /events/position">>();
  });

  it("each request body the server parses is the one the client sends", () => {
    expectTypeOf<z.input<typeof startRequest>>().toEqualTypeOf<ApiBody<"POST /runs">>();
    expectTypeOf<z.input<typeof decision>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/waits/:wait/approve">>();
    expectTypeOf<z.input<typeof denial>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/waits/:wait/deny">>();
    expectTypeOf<z.input<typeof signalBody>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/waits/:wait/signal">>();
    expectTypeOf<z.input<typeof releaseBody>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/release">>();
    expectTypeOf<z.input<typeof resumeBody>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/resume">>();
    expectTypeOf<z.input<typeof cancelBody>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/cancel">>();
    expectTypeOf<z.input<typeof forkBody>>().toEqualTypeOf<ApiBody<"POST /runs/:runId/fork">>();
  });

  it("each wire copy of a lower layer's type is equal to it", () => {
    expectTypeOf<wire.RunStatus>().toEqualTypeOf<RunStatus>();
    expectTypeOf<wire.WaitKind>().toEqualTypeOf<WaitKind>();
    expectTypeOf<wire.HoldKind>().toEqualTypeOf<HoldKind>();
    expectTypeOf<wire.RunDamage>().toEqualTypeOf<RunDamage>();
    expectTypeOf<wire.Role>().toEqualTypeOf<Role>();
    expectTypeOf<wire.Tally>().toEqualTypeOf<StoreTally>();
    // The engine's snapshot is an intersection (a row with its notes parsed): compared field by field.
    expectTypeOf<Fields<SnapshotView>>().toEqualTypeOf<wire.SnapshotView>();
    expectTypeOf<Omit<wire.SnapshotList, "snapshots">>().toEqualTypeOf<Omit<RunSnapshots, "snapshots">>();
    expectTypeOf<Fields<RunSnapshots["snapshots"][number]>>().toEqualTypeOf<wire.SnapshotList["snapshots"][number]>();
    expectTypeOf<Omit<wire.SnapshotTree, "snapshot">>().toEqualTypeOf<Omit<SnapshotFiles, "snapshot">>();
    expectTypeOf<Fields<SnapshotFiles["snapshot"]>>().toEqualTypeOf<wire.SnapshotTree["snapshot"]>();
    expectTypeOf<wire.TreeDiff>().toEqualTypeOf<TreeDiff>();
  });

  it("declares every JSON route the server serves, and no route it does not", () => {
    const key = (r: Route) => `${r.method} ${r.path}`;
    const json = ROUTES.filter((r) => r.kind !== "stream" && r.produces === undefined).map(key);
    // Completeness of this list is checked by the type: every key of ApiRoutes, and no other.
    const declared = {
      "GET /runs": true,
      "GET /runs/:runId": true,
      "GET /runs/:runId/journal": true,
      "GET /runs/:runId/events": true,
      "GET /waits": true,
      "GET /tally": true,
      "GET /holds": true,
      "GET /sessions": true,
      "GET /sessions/:sessionId": true,
      "GET /sessions/:sessionId/transcript": true,
      "POST /sessions/:sessionId/messages": true,
      "GET /definitions": true,
      "GET /workers": true,
      "POST /runs": true,
      "POST /runs/:runId/waits/:wait/approve": true,
      "POST /runs/:runId/waits/:wait/deny": true,
      "POST /runs/:runId/waits/:wait/signal": true,
      "POST /runs/:runId/release": true,
      "POST /runs/:runId/pause": true,
      "POST /runs/:runId/resume": true,
      "POST /runs/:runId/retry": true,
      "POST /runs/:runId/cancel": true,
      "POST /runs/:runId/fork": true,
      "GET /events/position": true,
      "GET /runs/:runId/snapshots": true,
      "GET /runs/:runId/snapshots/:step/tree": true,
      "GET /runs/:runId/diff": true,
      "GET /auth/me": true,
    } satisfies Record<ApiRoute, true>;
    expect(json.length).toBeGreaterThan(20);
    expect(Object.keys(declared).sort()).toEqual([...json, `GET ${AUTH_ME_PATH}`].sort());
  });
});
