import { SteadError } from "../../errors.js";

/** Node socket errors and Postgres SQLSTATEs that mean "the connection or the server went away". */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
const SERVER_GONE = new Set(["57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006", "08007"]);
/** Transaction conflicts that are safe to retry from the start. */
const CONFLICT = new Set(["40001", "40P01"]);

function codeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === "string" ? c : undefined;
}

export function isConnectionError(e: unknown): boolean {
  const code = codeOf(e);
  if (code && (SOCKET_CODES.has(code) || SERVER_GONE.has(code))) return true;
  const msg = e instanceof Error ? e.message : "";
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection|the database system is (starting up|shutting down)/i.test(msg);
}

/** The server could not write for lack of space (disk_full), or a file system said so. */
export function isDiskFull(e: unknown): boolean {
  return codeOf(e) === "53100" || /No space left on device/i.test(e instanceof Error ? e.message : "");
}

/** Worth retrying the whole operation: the server was unreachable, or the transaction hit a conflict. */
export function isRetryable(e: unknown): boolean {
  const code = codeOf(e);
  return isConnectionError(e) || (code !== undefined && CONFLICT.has(code));
}

/** A URL with its password replaced, for messages and `location`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

/** Turns a failure to connect into one clear line naming the problem and the fix. */
export function describeConnectError(e: unknown, location: string): unknown {
  if (e instanceof SteadError) return e;
  const code = codeOf(e);
  const msg = e instanceof Error ? e.message : String(e);
  if (code === "28P01" || code === "28000") {
    // Not "unreachable": trying again would not help, so a waiting worker must not wait for it.
    return new SteadError("STEAD_STORE_AUTH_FAILED", `Postgres at ${location} refused the credentials: ${msg}`, {
      fix: "check the user and password in STEAD_DATABASE_URL (or --store)",
      cause: e,
    });
  }
  if (code === "3D000") {
    return new SteadError("STEAD_STORE_MISSING", `${msg} (at ${location})`, {
      fix: "create the database first (createdb <name>), or point STEAD_DATABASE_URL at an existing one",
      cause: e,
    });
  }
  if (isConnectionError(e) || (code !== undefined && /^E[A-Z]+$/.test(code)) || /timeout/i.test(msg)) {
    return new SteadError("STEAD_STORE_UNREACHABLE", `cannot reach Postgres at ${location}: ${code ?? msg}`, {
      fix: "check that the server is running and that STEAD_DATABASE_URL (or --store) names its host, port and database",
      cause: e,
    });
  }
  return e;
}
