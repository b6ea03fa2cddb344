/**
 * The console's one door to the server: the typed client (same origin, the browser-session
 * cookie rides along; the page never holds a token), and `raw` for routes it does not cover yet.
 */
import { createClient, SteadClientError } from "../../src/client/index.js";

export const api = createClient({ url: location.origin });
export { SteadClientError };

export interface Problem {
  code: string;
  status: number;
  message: string;
  fix: string | undefined;
}

/** What a refusal or a lost request says, for a page to show as text. */
export function problemOf(e: unknown): Problem {
  if (e instanceof SteadClientError) return { code: e.code, status: e.status, message: e.message, fix: e.fix };
  return { code: "STEAD_CONSOLE", status: 0, message: e instanceof Error ? e.message : String(e), fix: undefined };
}

/** A refused answer as the client's error: the problem document's code, detail and fix. */
export async function refusalOf(res: Response): Promise<SteadClientError> {
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  const detail = typeof body?.detail === "string" ? body.detail : `the server answered ${res.status}`;
  return new SteadClientError(typeof body?.code === "string" ? body.code : "STEAD_CONSOLE", res.status, detail, typeof body?.fix === "string" ? body.fix : undefined);
}

/** A GET of `/api/v1` + `path` for routes the client lacks; a refusal throws as the client does. */
export async function rawGet<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
  const res = await fetch(`/api/v1${path}${q.size > 0 ? `?${q.toString()}` : ""}`, { headers: { accept: "application/json" } });
  if (!res.ok) throw await refusalOf(res);
  return (await res.json()) as T;
}

/** The raw text of a GET (a workspace file). */
export async function rawText(path: string, query: Record<string, string | undefined> = {}): Promise<string> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
  const res = await fetch(`/api/v1${path}${q.size > 0 ? `?${q.toString()}` : ""}`);
  if (!res.ok) throw await refusalOf(res);
  return res.text();
}
