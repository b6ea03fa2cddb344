/**
 * Starts and approvals per second through the HTTP API: 50 concurrent callers in this process
 * against `stead serve` in its own process (as a deployment runs it), over keep-alive
 * connections, on the same kind of store and runs as the library callers of control-rate.ts.
 * The server's first `runs` starts and approvals are timed apart (`cold*`): a fresh process runs
 * them while V8 still compiles its hot paths, at about half its later rate, and the library callers
 * they are set against run in this process, warm from the workloads before them.
 */
import { Agent, request } from "node:http";
import { join } from "node:path";
import { CALLERS, concurrently, parkAll } from "./control-rate.js";
import { stead as lib } from "./lib.js";
import { announceParked, parked } from "./parked-memory.js";
import { serveCli } from "./serve-cli.js";

/** POSTs `body` as JSON; the parsed reply, or a thrown error naming the status and the reply. */
function post(agent: Agent, url: string, token: string, body: unknown): Promise<Record<string, unknown>> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      let reply = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (reply += c));
      res.on("end", () => {
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`POST ${url}: ${String(res.statusCode)} ${reply}`));
        else resolve(JSON.parse(reply) as Record<string, unknown>);
      });
    });
    req.on("error", reject);
    req.end(text);
  });
}

export interface HttpControlRates {
  /** Of a server past its first `runs` requests of each kind. */
  startsPerSec: number;
  approvalsPerSec: number;
  /** Of a freshly started server's first `runs` of each. */
  coldStartsPerSec: number;
  coldApprovalsPerSec: number;
}

export async function httpControlRates(dir: string, runs: number): Promise<HttpControlRates> {
  const store = join(dir, "stead.db");
  const stead = lib.createStead({ store });
  const agent = new Agent({ keepAlive: true, maxSockets: CALLERS });
  let served: Awaited<ReturnType<typeof serveCli>> | undefined;
  try {
    await stead.ready();
    const { token } = await stead.tokens.create({ name: "bench", role: "operator" });
    await announceParked(stead);
    served = await serveCli(store);
    const api = `${served.url}/api/v1`;
    const ids: string[] = [];
    const start = async () => {
      const r = await post(agent, `${api}/runs`, token, { definition: parked.name, input: null });
      ids.push(String(r.id));
    };
    const coldStartsPerSec = await concurrently(runs, start);
    const startsPerSec = await concurrently(runs, start);
    await parkAll(stead, 2 * runs);
    const approve = (offset: number) => (i: number) => post(agent, `${api}/runs/${encodeURIComponent(ids[offset + i] as string)}/waits/go/approve`, token, {});
    const coldApprovalsPerSec = await concurrently(runs, approve(0));
    const approvalsPerSec = await concurrently(runs, approve(runs));
    const answered = await stead.runs.count({ status: ["pending"] });
    if (answered !== 2 * runs) throw new Error(`${answered} of ${2 * runs} runs approved through the API are pending again`);
    return { startsPerSec, approvalsPerSec, coldStartsPerSec, coldApprovalsPerSec };
  } finally {
    agent.destroy();
    served?.child.kill("SIGTERM");
    await stead.close();
  }
}
