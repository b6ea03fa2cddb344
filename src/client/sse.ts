/**
 * An incremental `text/event-stream` parser (the WHATWG rules): lines end with CRLF, LF or CR; a
 * blank line dispatches the message built so far; `:` lines are comments; `id` persists across
 * messages; `retry` sets the reconnection delay. A message cut off by the end of the stream is
 * dropped, never delivered half.
 */
export interface SseMessage {
  /** The last event id (the stream position after this event). */
  id: string;
  event: string;
  data: string;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private lastId = "";
  /** The reconnection delay the server asked for, if it did. */
  retryMs: number | undefined;
  private readonly decoder = new TextDecoder();
  /** A CR ended the last chunk: a LF starting the next one belongs to it. */
  private pendingCr = false;

  /** Feeds a chunk; returns the messages it completed. */
  push(chunk: Uint8Array): SseMessage[] {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (m[0] === "\r" && m.index === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") {
      const data = this.data;
      const event = this.event;
      this.data = [];
      this.event = "";
      if (data.length === 0) return undefined;
      return { id: this.lastId, event: event || "message", data: data.join("\n") };
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}
