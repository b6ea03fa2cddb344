/**
 * The runs list: one page of `GET /runs` at a time, filtered and sorted as the URL's query says
 * (so a view is a link), moved on by the page's `nextCursor`, re-read when a live event arrives.
 * A run whose sealed values the server could not read (its row's, or an open wait's or hold's of
 * it) is listed with its mark (`damaged`).
 */
import type { RunFilter, RunStatus } from "../../../src/client/index.js";
import { api } from "../api.js";
import { useLiveTick } from "../live.js";
import { Link, navigate, path, withQuery } from "../router.js";
import { DamagedMark } from "../parts/damaged.js";
import { useLoad } from "../parts/load.js";
import { needPerson, tally } from "../parts/runs-api.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { NEEDS_PERSON, Status } from "../parts/status.js";
import { Time } from "../parts/time.js";

export const STATUSES: RunStatus[] = ["pending", "running", "waiting", "held", "paused", "completed", "failed", "cancelled"];
/** Rows per page; `?limit=` (1-200) asks for another. */
const PAGE = 50;

interface View {
  status: RunStatus[];
  definition: string;
  q: string;
  sort: "createdAt" | "updatedAt";
  order: "asc" | "desc";
  cursor: string;
  limit: number;
}

function viewOf(query: URLSearchParams): View {
  const status = (query.get("status") ?? "").split(",").filter((s): s is RunStatus => (STATUSES as string[]).includes(s));
  return {
    status,
    definition: query.get("definition") ?? "",
    q: query.get("q") ?? "",
    sort: query.get("sort") === "updatedAt" ? "updatedAt" : "createdAt",
    order: query.get("order") === "asc" ? "asc" : "desc",
    cursor: query.get("cursor") ?? "",
    limit: Math.min(200, Math.max(1, Math.floor(Number(query.get("limit") ?? PAGE)) || PAGE)),
  };
}

function hrefOf(v: View): string {
  return withQuery("/runs", {
    status: v.status.join(","),
    definition: v.definition,
    q: v.q,
    sort: v.sort === "createdAt" ? undefined : v.sort,
    order: v.order === "desc" ? undefined : v.order,
    limit: v.limit === PAGE ? undefined : String(v.limit),
    cursor: v.cursor,
  });
}

/** A change of filter starts again at the first page: a cursor belongs to its filter. */
const refilter = (v: View, change: Partial<View>) => navigate(hrefOf({ ...v, ...change, cursor: "" }));

const text = (v: FormDataEntryValue | null): string => (typeof v === "string" ? v.trim() : "");

const moves = (e: { type: string }) => e.type !== "model.delta" && e.type !== "model.text";

export function RunsPage(props: { query: URLSearchParams }) {
  const v = viewOf(props.query);
  const tick = useLiveTick(moves);
  const filter: RunFilter = {
    limit: v.limit,
    sort: v.sort,
    order: v.order,
    ...(v.status.length > 0 ? { status: v.status } : {}),
    ...(v.definition ? { definition: v.definition } : {}),
    ...(v.q ? { idPrefix: v.q } : {}),
    ...(v.cursor ? { cursor: v.cursor } : {}),
  };
  const key = hrefOf(v);
  const page = useLoad(() => api.runs.list(filter), [key, tick]);
  const counts = useLoad(() => tally(), [tick]);
  const defs = useLoad(() => api.definitions.list(), []);

  const need = counts.value === undefined ? 0 : needPerson(counts.value);
  return (
    <section aria-labelledby="runs-h">
      <h1 id="runs-h">
        Runs
        {need > 0 ? (
          <Link href={hrefOf({ ...v, status: ["waiting", "held"], cursor: "" })} class="badge" title="runs that need a person (waiting, held)">
            {need}
            <span class="visually-hidden"> need a person</span>
          </Link>
        ) : null}
      </h1>
      {counts.value ? (
        <p class="counts" aria-label="Runs by status">
          {STATUSES.filter((s) => (counts.value?.runs[s] ?? 0) > 0).map((s) => (
            <Link key={s} href={hrefOf({ ...v, status: [s], cursor: "" })} class={NEEDS_PERSON.has(s) ? "count need" : "count"}>
              {s}: {counts.value?.runs[s]}
            </Link>
          ))}
        </p>
      ) : null}
      <form
        class="filters"
        aria-label="Filter runs"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          refilter(v, { q: text(f.get("q")), definition: text(f.get("definition")) });
        }}
      >
        <fieldset class="runs-status">
          <legend>Status</legend>
          {STATUSES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                name="status"
                value={s}
                checked={v.status.includes(s)}
                onChange={(e) => refilter(v, { status: e.currentTarget.checked ? [...v.status, s] : v.status.filter((x) => x !== s) })}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <label>
          Definition
          <input name="definition" list="runs-definitions" defaultValue={v.definition} key={`d-${v.definition}`} />
        </label>
        <datalist id="runs-definitions">
          {(defs.value?.definitions ?? []).map((d) => (
            <option key={String(d.name)} value={String(d.name)} />
          ))}
        </datalist>
        <label>
          Id starts with
          <input name="q" type="search" defaultValue={v.q} key={`q-${v.q}`} />
        </label>
        <label>
          Sort by
          <select value={v.sort} onChange={(e) => refilter(v, { sort: e.currentTarget.value === "updatedAt" ? "updatedAt" : "createdAt" })}>
            <option value="createdAt">created</option>
            <option value="updatedAt">updated</option>
          </select>
        </label>
        <label>
          Order
          <select value={v.order} onChange={(e) => refilter(v, { order: e.currentTarget.value === "asc" ? "asc" : "desc" })}>
            <option value="desc">newest first</option>
            <option value="asc">oldest first</option>
          </select>
        </label>
        <button type="submit">Apply</button>
        {key !== "/runs" ? (
          <Link href="/runs" class="button">
            Clear
          </Link>
        ) : null}
      </form>
      {page.error ? <ErrorBox error={page.error} retry={page.reload} /> : null}
      {page.value === undefined ? (
        page.error ? null : <Loading what="runs" />
      ) : page.value.runs.length === 0 ? (
        <Empty>{v.cursor ? "No more runs on this page." : key === "/runs" ? "No runs yet: start one with `stead run` or `stead start`." : "No run matches these filters."}</Empty>
      ) : (
        <div class="table-wrap">
          <table class="runs-table stack">
            <thead>
              <tr>
                <th>Id</th>
                <th>Definition</th>
                <th>Status</th>
                <th class="wide">Last step</th>
                <th class="wide">Created</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {page.value.runs.map((r) => {
                const last = (r.lastStep as { id?: unknown } | null | undefined)?.id;
                return (
                  <tr key={r.id} data-run={r.id}>
                    <td class="key">
                      <Link href={path("runs", r.id)}>
                        <code>{r.id}</code>
                      </Link>
                    </td>
                    <td>{r.definition}</td>
                    <td>
                      <Status status={r.status} />
                      {r.damaged ? (
                        <>
                          {" "}
                          <DamagedMark damaged={r.damaged} />
                        </>
                      ) : null}
                    </td>
                    <td class="wide">{typeof last === "string" ? <code>{last}</code> : "—"}</td>
                    <td class="wide">
                      <Time at={r.createdAt} />
                    </td>
                    <td>
                      <Time at={r.updatedAt} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages of runs">
        {v.cursor ? (
          <Link href={hrefOf({ ...v, cursor: "" })} class="button">
            First page
          </Link>
        ) : null}
        {page.value?.nextCursor ? (
          <Link href={hrefOf({ ...v, cursor: page.value.nextCursor })} class="button">
            Next
          </Link>
        ) : null}
      </nav>
    </section>
  );
}
