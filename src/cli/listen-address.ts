import { SteadError } from "../errors.js";
import { DEFAULT_PORT } from "../server/address.js";

/** `host:port`, `port`, or `[v6]:port` (host default 127.0.0.1), as `--listen` and `--metrics` take it. */
export function parseListen(value: string, option = "--listen"): { host: string; port: number } {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port > 65_535) {
    throw new SteadError("STEAD_BAD_OPTION", `${option} ${JSON.stringify(value.slice(0, 100))} is not host:port`, { fix: `pass e.g. ${option} 127.0.0.1:${DEFAULT_PORT} or ${option} ${DEFAULT_PORT}` });
  }
  return { host: (m[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}
