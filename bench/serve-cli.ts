/** `stead serve` from the built CLI on 127.0.0.1 over a store, as a benchmark drives it: its process and base URL. */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";

const bin = resolve(import.meta.dirname, "../bin/stead.js");

export interface ServedCli {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:PORT`, without `/api/v1`. */
  readonly url: string;
}

export async function serveCli(store: string): Promise<ServedCli> {
  const child = spawn(process.execPath, [bin, "serve", "--listen", "127.0.0.1:0", "--no-login-url", "--store", store], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`stead serve did not start in 30 s: ${out}`)), 30_000);
    const look = (chunk: Buffer) => {
      out += chunk.toString();
      const m = / on (http:\/\/\S+)\/api\/v1/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        done(m[1]);
      }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => fail(new Error(`stead serve exited ${String(code)}: ${out}`)));
  });
  return { child, url };
}
