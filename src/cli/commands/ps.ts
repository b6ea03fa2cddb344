import type { Command } from "commander";
import { parseDuration } from "../../engine/durations.js";
import { spaceClause, storageSpace } from "../../engine/runs/storage-space.js";
import type { RunListQuery } from "../../engine/runs/listing.js";
import { SteadError } from "../../errors.js";
import { RUN_STATUSES, type RunStatus } from "../../store/types.js";
import { statusColour } from "../colour.js";
import { act, example, parsePositiveInt, print, printJson, shellQuote, storeOption, withStead } from "../context.js";
import { age, printable, table, waitLabel } from "../format.js";
import { writeErr } from "../report-error.js";

function parseStatuses(text: string): RunStatus[] {
  const list = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s));
  if (bad.length > 0 || list.length === 0) {
    throw new SteadError("STEAD_BAD_OPTION", `unknown run status ${JSON.stringify(bad[0] ?? text)}`, {
      fix: `use a comma-separated list of: ${RUN_STATUSES.join(", ")}`,
    });
  }
  return list as RunStatus[];
}

/** `--since`: a duration back from now ("2h") or a date and time ("2025-06-01T09:00Z"), as ms. */
export function parseSince(text: string, flag: string, now = Date.now()): number {
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    const at = Date.parse(t);
    if (Number.isFinite(at)) return at;
  } else if (t !== "") {
    try {
      return now - parseDuration(t, flag);
    } catch {
      // Reported below, naming both forms.
    }
  }
  throw new SteadError("STEAD_BAD_OPTION", `invalid ${flag}: ${JSON.stringify(text)}`, {
    fix: `use a duration back from now ("30m", "2h", "7d") or a date and time ("2025-06-01T09:00Z")`,
  });
}

const SORTS = { created: "createdAt", updated: "updatedAt" } as const;

interface PsOptions {
  status?: string;
  definition?: string;
  session?: string;
  parent?: string;
  id?: string;
  since?: string;
  updatedSince?: string;
  sort: string;
  order: string;
  limit: string;
  cursor?: string;
  json?: boolean;
}

/** The query, and the flags that repeat it (relative times fixed, so the cursor's filters stay the same). */
function queryOf(o: PsOptions): { query: RunListQuery; flags: string[] } {
  const query: RunListQuery = {};
  const flags: string[] = [];
  const flag = (name: string, value: string) => flags.push(name, shellQuote(value));
  if (o.status !== undefined) {
    query.status = parseStatuses(o.status);
    flag("--status", query.status.join(","));
  }
  if (o.definition !== undefined) flag("--definition", (query.definition = o.definition));
  if (o.session !== undefined) flag("--session", (query.sessionId = o.session));
  if (o.parent !== undefined) flag("--parent", (query.parentId = o.parent));
  if (o.id !== undefined) flag("--id", (query.idPrefix = o.id));
  if (o.since !== undefined) flag("--since", new Date((query.createdSince = parseSince(o.since, "--since"))).toISOString());
  if (o.updatedSince !== undefined) flag("--updated-since", new Date((query.updatedSince = parseSince(o.updatedSince, "--updated-since"))).toISOString());
  const sort = (SORTS as Record<string, RunListQuery["sort"]>)[o.sort];
  if (sort === undefined) throw new SteadError("STEAD_BAD_OPTION", `invalid --sort: ${JSON.stringify(o.sort)}`, { fix: "use --sort created or --sort updated" });
  query.sort = sort;
  if (o.sort !== "created") flag("--sort", o.sort);
  if (o.order !== "asc" && o.order !== "desc") throw new SteadError("STEAD_BAD_OPTION", `invalid --order: ${JSON.stringify(o.order)}`, { fix: "use --order desc (newest first) or --order asc" });
  query.order = o.order;
  if (o.order !== "desc") flag("--order", o.order);
  query.limit = parsePositiveInt(o.limit, "--limit");
  flag("--limit", String(query.limit));
  if (o.cursor !== undefined) query.cursor = o.cursor;
  return { query, flags };
}

export function registerPs(program: Command): void {
  const ps = program
    .command("ps")
    .description("list runs, a page at a time: status, what each waits for or why it is held, its last step")
    .option("--status <s,...>", `only runs with these statuses (${RUN_STATUSES.join(",")})`)
    .option("--definition <name>", "only runs of this definition")
    .option("--session <id>", "only the turns of this session")
    .option("--parent <run>", "only the children of this run")
    .option("--id <prefix>", "only runs whose id starts with this text")
    .option("--since <when>", 'only runs created since: a duration back from now ("2h") or a date and time')
    .option("--updated-since <when>", "only runs whose row changed since (same forms as --since)")
    .option("--sort <key>", "order by created or updated time", "created")
    .option("--order <dir>", "desc (newest first) or asc", "desc")
    .option("--limit <n>", "runs per page (at most 1000)", "50")
    .option("--cursor <cursor>", "the next page of an earlier `stead ps` (same filters), as it printed")
    .option("--json", "print JSON: an array of the page's runs (the next page's command goes to stderr)")
    .action(
      act(async (o: PsOptions, cmd: Command) => {
        const { query, flags } = queryOf(o);
        await withStead(cmd, "read", async (stead) => {
          const page = await stead.runs.list(query);
          // One bounded read for the page: no journal is read (a run's last step is one key lookup).
          const activity = new Map((await stead.runs.activity(page.runs.map((r) => r.id))).map((a) => [a.runId, a]));
          const rows = page.runs.map((run) => {
            const a = activity.get(run.id);
            return {
              id: run.id,
              definition: run.definition,
              status: run.status,
              waitingFor: (a?.openWaits ?? []).map((w) => ({ kind: w.kind, name: w.name, wakeAt: w.wakeAt, ...(w.damaged ? { damaged: w.damaged } : {}) })),
              holds: (a?.openHolds ?? []).map((h) => ({
                id: h.id,
                kind: h.kind,
                stepId: h.stepId,
                reason: h.reason,
                ...(h.kind === "storage" && !h.damaged ? { since: typeof h.details.since === "number" ? h.details.since : h.createdAt, ...storageSpace(h.details) } : {}),
                ...(h.damaged ? { damaged: h.damaged } : {}),
              })),
              lastStep: a?.lastStep ?? null,
              parentId: run.parentId,
              sessionId: run.sessionId,
              createdAt: run.createdAt,
              // A run's row changes with its state, not at every step: its last activity is its latest event.
              updatedAt: Math.max(run.updatedAt, a?.lastEventAt ?? 0),
              // The run's own row, else an open wait or hold of it: either way reading the run refuses.
              ...(run.damaged ? { damaged: run.damaged } : a?.damaged ? { damaged: a.damaged } : {}),
            };
          });
          const store = storeOption(cmd);
          const next = page.nextCursor === null ? undefined : ["stead", "ps", ...(o.json ? ["--json"] : []), ...flags, ...(store === undefined ? [] : ["--store", shellQuote(store)]), "--cursor", page.nextCursor].join(" ");
          if (o.json) {
            printJson(rows);
            if (next) process.stderr.write(`next page: ${next}\n`);
            return;
          }
          if (rows.length === 0) return print(o.cursor !== undefined ? "no more runs" : query.status ? `no ${query.status.join("/")} runs` : "no runs");
          print(
            table(
              ["ID", "DEFINITION", "STATUS", "WAITING FOR / HOLD", "LAST STEP", "UPDATED"],
              rows.map((r) => [
                r.id,
                r.definition,
                statusColour(r.status),
                [
                  ...(r.damaged ? [`damaged: ${r.damaged.code}`] : []),
                  ...r.waitingFor.map((w) => waitLabel(w)),
                  ...r.holds.map((h) => (h.since !== undefined ? `storage full since ${new Date(h.since).toISOString()}${h.needBytes === undefined ? "" : `, ${spaceClause({ needBytes: h.needBytes, freeBytes: h.freeBytes ?? null })}`}` : h.kind)),
                ].join(", ") || "-",
                r.lastStep ? `${r.lastStep.id}${r.lastStep.status === "completed" ? "" : ` (${r.lastStep.status})`}` : "-",
                age(r.updatedAt),
              ]),
            ),
          );
          for (const r of rows) if (r.damaged) writeErr(`run ${r.id} is damaged: ${printable(r.damaged.message)}`);
          if (next) print(`${rows.length} runs shown (${o.order === "asc" ? "oldest" : "newest"} ${o.sort} first); next page: ${next}`);
        });
      }),
    );
  example(ps, "stead ps --status waiting,held", "stead ps --definition triage --since 2h", "stead ps --json --limit 500");
}
