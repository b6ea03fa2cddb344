/** A stream route's answer: the hub's stream for its source, as an SSE response. */
import type { StreamHub } from "./hub.js";
import { SSE_TYPE } from "./sse.js";
import type { StreamSource } from "./subscriber.js";

export async function streamResponse(hub: StreamHub, source: StreamSource, after: string | null): Promise<Response> {
  const body = await hub.open(source, after === "" ? null : after);
  // A finished run with nothing after the position: 204 tells an EventSource to stop reconnecting.
  if (body === null) return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
  // X-Accel-Buffering: a proxy that buffers responses would hold the live text back.
  return new Response(body, { status: 200, headers: { "Content-Type": SSE_TYPE, "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
}
