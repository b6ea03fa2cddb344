/**
 * The agent verbs of the real `stead` binary (spawned `node bin/stead.js`, built dist/): tool
 * approvals with edits and scope, sessions, and `why` on a quota park. Runs are parked in-process
 * on the same SQLite file, then answered through the CLI.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, type Stead } from "../src/index.js";
import { cli, dumpStore, lines, requireBuild, spawnCli, tempDir, until, type Summary } from "./cli-helpers.js";
import { providerModel, reply, type RecordedRequest } from "./helpers/provider-server.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { FAST_RETRY, agentTestKit, contentText, eventsOf, lastUser, toolResult } from "./fixtures/agents/kit.js";
import type { SessionView } from "../src/index.js";

const CLI_CHAT = join(import.meta.dirname, "fixtures", "agents", "cli-chat.ts");

beforeAll(() => requireBuild());

const { h, server } = agentTestKit();

/** A deployer parked at the approval of `deploy({ env: "prod" })` (call c1); with `secondCall`, the model deploys again after. */
async function parkedDeployer(options: { secondCall?: boolean } = {}) {
  const s = await server((req: RecordedRequest) => {
    const results = req.messages.filter((m) => m.role === "tool").length;
    if (results === 0) return reply.toolCalls([{ id: "c1", name: "deploy", args: { env: "prod" } }]);
    if (results === 1 && options.secondCall) return reply.toolCalls([{ id: "c2", name: "deploy", args: { env: "staging" } }]);
    return reply.text("handled");
  });
  const ran: unknown[] = [];
  const def = agent("cli-deployer", {
    model: providerModel(s.url),
    retry: FAST_RETRY,
    tools: { deploy: tool({ input: z.object({ env: z.enum(["staging", "prod"]) }), needsApproval: true, run: (i) => (ran.push(i), `deployed to ${i.env}`) }) },
  });
  const stead = h.create();
  const run = await stead.run(def, "ship it", FAST_FOLLOW);
  expect(run.status).toBe("waiting");
  return { s, def, ran, stead, runId: run.id, db: stead.store.location, dir: tempDir() };
}

describe("stead approve / deny on an agent's tool call", () => {
  it("--edit with arguments that fail the schema: exit 2, one line naming the problem, the store unchanged; a valid --edit runs the tool with it", async () => {
    const { s, def, ran, stead, runId, db, dir } = await parkedDeployer();
    const before = dumpStore(db);

    const bad = await cli(["approve", runId, "approve:c1", "--edit", '{"env":"moon"}', "--store", db], dir);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(lines(bad.stderr)).toEqual([
      expect.stringMatching(/^stead: the edited arguments for deploy do not match its input schema: \/env must be equal to one of the allowed values; the call still waits for a decision — fix the JSON/),
    ]);
    expect(dumpStore(db)).toEqual(before);

    const notJson = await cli(["approve", runId, "approve:c1", "--edit", "{env: staging}", "--store", db], dir);
    expect(notJson.code).toBe(2);
    expect(lines(notJson.stderr)).toEqual([expect.stringMatching(/^stead: --edit is not valid JSON/)]);
    expect(dumpStore(db)).toEqual(before);

    const ok = await cli(["approve", runId, "approve:c1", "--edit", '{"env":"staging"}', "--by", "carol", "--store", db], dir);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`approved "approve:c1" on run ${runId} (by carol)`);
    expect((await eventsOf(stead, runId, "approval.approved"))[0]?.data).toMatchObject({ by: "carol", edited: true });

    expect((await stead.runs.follow(runId, [def], FAST_FOLLOW)).status).toBe("completed");
    expect(ran).toEqual([{ env: "staging" }]);
    expect(toolResult(s.requests[1], "c1")).toBe("deployed to staging");
  });

  it("--scope run: the tool's later calls in the run do not park; a bad --scope is a usage error that changes nothing", async () => {
    const { def, ran, stead, runId, db, dir } = await parkedDeployer({ secondCall: true });
    const before = dumpStore(db);
    const bogus = await cli(["approve", runId, "approve:c1", "--scope", "forever", "--store", db], dir);
    expect(bogus.code).toBe(2);
    expect(lines(bogus.stderr)).toHaveLength(1);
    expect(dumpStore(db)).toEqual(before);

    const ok = await cli(["approve", runId, "approve:c1", "--scope", "run", "--by", "carol", "--store", db], dir);
    expect(ok.code).toBe(0);
    expect((await stead.runs.follow(runId, [def], FAST_FOLLOW)).status).toBe("completed");
    expect(ran).toEqual([{ env: "prod" }, { env: "staging" }]);
    expect((await stead.runs.waits(runId)).map((w) => w.name)).toEqual(["approve:c1"]);
    expect((await eventsOf(stead, runId, "approval.approved"))[0]?.data).toMatchObject({ by: "carol", scope: "run" });
  });

  it("deny --reason: the model is told who denied it and why; --edit on a deny is not an option", async () => {
    const { s, def, ran, stead, runId, db, dir } = await parkedDeployer();
    const withEdit = await cli(["deny", runId, "approve:c1", "--reason", "no", "--edit", '{"env":"staging"}', "--store", db], dir);
    expect(withEdit.code).toBe(2);
    const deny = await cli(["deny", runId, "approve:c1", "--reason", "freeze until Monday", "--by", "dave", "--store", db], dir);
    expect(deny.code).toBe(0);
    expect((await stead.runs.follow(runId, [def], FAST_FOLLOW)).status).toBe("completed");
    expect(ran).toEqual([]);
    expect(toolResult(s.requests[1], "c1")).toBe("denied by dave: freeze until Monday");
  });

  it("another decision on a call already decided: exit 2, one line naming the first, the store unchanged", async () => {
    const { runId, db, dir } = await parkedDeployer();
    expect((await cli(["approve", runId, "approve:c1", "--store", db], dir)).code).toBe(0);
    const before = dumpStore(db);
    const again = await cli(["approve", runId, "approve:c1", "--edit", '{"env":"staging"}', "--store", db], dir);
    expect(again.code).toBe(2);
    expect(lines(again.stderr)).toEqual([expect.stringMatching(/^stead: "approve:c1" on run .* was already approved by tester@\S+ at \d{4}-/)]);
    expect(dumpStore(db)).toEqual(before);
  });
});

describe("stead send / stead sessions", () => {
  async function sessionsJson(db: string, dir: string): Promise<SessionView[]> {
    const r = await cli(["sessions", "--json", "--store", db], dir);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as SessionView[];
  }

  it("send queues turns (the agent's file remembered after the first); a worker runs them in order; sessions --json shows the queue, then the outcome", async () => {
    const s = await server((req) => reply.text(`ANSWER to ${lastUser(req)}`));
    const env = { AGENT_TEST_PROVIDER_URL: s.url };
    const stead: Stead = h.create();
    await stead.ready();
    const db = stead.store.location;
    const dir = tempDir();

    const unknown = await cli(["send", "s-cli", "hello", "--store", db], dir, { env });
    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([expect.stringMatching(/^stead: no session s-cli yet, so Stead does not know its agent — .*--agent/)]);

    const first = await cli(["send", "s-cli", "hello there", "--agent", CLI_CHAT, "--store", db], dir, { env });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^queued turn 1 of session s-cli as run \S+ \(cli-chat\)/);
    const second = await cli(["send", "s-cli", "and then?", "--store", db], dir, { env });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^queued turn 2 of session s-cli as run \S+ \(cli-chat\)/);

    const queued = await sessionsJson(db, dir);
    expect(queued).toEqual([expect.objectContaining({ id: "s-cli", definition: "cli-chat", turns: 2, open: 2, current: expect.objectContaining({ turn: 1, status: "pending" }) as unknown, last: null })]);
    const table = lines((await cli(["sessions", "--store", db], dir)).stdout);
    expect(table[0]).toMatch(/^SESSION\s+AGENT\s+TURNS\s+QUEUED\s+CURRENT\s+LAST TURN\s+UPDATED/);
    expect(table[1]).toMatch(/^s-cli\s+cli-chat\s+2\s+1\s+#1 pending/);
    expect(s.requests).toHaveLength(0);

    const worker = spawnCli(["worker", CLI_CHAT, "--poll", "20", "--store", db], dir, { env });
    try {
      await until("both turns to end", async () => ((await stead.sessions.list({ sessionId: "s-cli" }))[0]?.open === 0 ? true : undefined));
    } finally {
      worker.child.kill("SIGTERM");
    }
    expect((await worker.done).code).toBe(0);

    const ended = await sessionsJson(db, dir);
    expect(ended).toEqual([expect.objectContaining({ id: "s-cli", turns: 2, open: 0, current: null, last: expect.objectContaining({ turn: 2, outcome: "completed", error: null }) as unknown })]);
    expect(s.requests.map((r) => r.messages.map((m) => [m.role, contentText(m)]))).toEqual([
      [
        ["system", "Answer in one line."],
        ["user", "hello there"],
      ],
      [
        ["system", "Answer in one line."],
        ["user", "hello there"],
        ["assistant", "ANSWER to hello there"],
        ["user", "and then?"],
      ],
    ]);
  });

  it("send that refuses (no such session, an --agent file that does not exist) creates no store", async () => {
    const dir = tempDir();
    const unknown = await cli(["send", "s-none", "hello"], dir);
    expect(unknown.code).toBe(2);
    const missing = await cli(["send", "s-none", "hello", "--agent", "./nope.ts"], dir);
    expect(missing.code).toBe(2);
    expect(lines(missing.stderr)).toEqual([expect.stringMatching(/^stead: no file \.\/nope\.ts/)]);
    expect(existsSync(join(dir, ".stead"))).toBe(false);
  });
});

describe("stead why on a quota park", () => {
  it("names the model, the reset time, and that no process or retry is spent", async () => {
    const s = await server([reply.rateLimited({ "retry-after": "3600" })]);
    const def = agent("cli-quota", { model: providerModel(s.url, "busy-model"), retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(def, "hi", FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    const [wait] = await stead.runs.waits(run.id);
    const db = stead.store.location;
    const dir = tempDir();

    const why = await cli(["why", run.id, "--store", db], dir);
    expect(why.code).toBe(0);
    expect(why.stdout).toMatch(/waiting for the provider's quota for test-provider\.chat:busy-model to reset: parked with no process and no retry spent, reset in (59m|1h)/);
    expect(why.stdout).toContain(`(at ${new Date(wait?.wakeAt ?? 0).toISOString()})`);

    const ps = JSON.parse((await cli(["ps", "--json", "--store", db], dir)).stdout) as Summary[];
    expect(ps.find((r) => r.id === run.id)).toMatchObject({ status: "waiting", waitingFor: [{ kind: "quota", name: "model-1.quota" }] });
  });
});
