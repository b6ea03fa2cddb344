/**
 * A refusal from a Stead server, as its problem document (RFC 9457) says: Stead's error `code`
 * (docs/errors.md), the HTTP status, what was wrong and the fix.
 */
export class SteadClientError extends Error {
  override readonly name = "SteadClientError";
  /** Stead's error code (`STEAD_RUN_NOT_FOUND`, …); `STEAD_CLIENT_NETWORK` when no answer came, `STEAD_CLIENT_BAD_RESPONSE` when the answer was not the API's. */
  readonly code: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly fix: string | undefined;
  /** The problem document as sent (ids and the field a 400 names). */
  readonly problem: Readonly<Record<string, unknown>>;

  constructor(code: string, status: number, message: string, fix: string | undefined, problem: Readonly<Record<string, unknown>> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = status;
    this.fix = fix;
    this.problem = problem;
  }
}

/** The error a non-2xx response stands for. */
export async function refusal(res: Response): Promise<SteadClientError> {
  const text = await res.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  if (typeof body === "object" && body !== null && typeof (body as { code?: unknown }).code === "string") {
    const p = body as Record<string, unknown>;
    return new SteadClientError(String(p.code), res.status, typeof p.detail === "string" ? p.detail : `HTTP ${res.status}`, typeof p.fix === "string" ? p.fix : undefined, p);
  }
  return new SteadClientError("STEAD_CLIENT_BAD_RESPONSE", res.status, `HTTP ${res.status} with no problem document`, "check the client's url points at a Stead server's base (http://host:port)");
}
