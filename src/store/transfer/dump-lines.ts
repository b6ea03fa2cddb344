/**
 * The lines of a dump, read from a stream in time linear in its length, however long one line is
 * (a workspace file is one line of base64: megabytes). Each chunk is searched once for line ends,
 * from where the last search stopped, and a line's pieces are joined once, when its end arrives.
 *
 * A line is refused as soon as it passes {@link MAX_LINE_BYTES}, before more of it is held: the
 * memory a line takes is bounded by that, not by what the stream sends (a 1 GiB line of NULs held
 * 2 GiB before it was refused at its end, a 4.5 GiB one 4.8 GB).
 *
 * Hazard: never append a chunk to the line so far and search that again from its start; each
 * chunk then scans the whole line anew (a 64 MiB line took 184 s).
 */
import { constants } from "node:buffer";
import { badDump } from "./dump-format.js";

const LF = 0x0a;
const CR = 0x0d;

/**
 * The longest line a dump may have, in bytes: the longest string this runtime holds (536,870,888
 * characters on 64-bit Node 20), which no line could pass anyway, since it is read into one string
 * to be parsed. It is also the longest line `stead export` writes: each row's line is built as one
 * string, and every line it writes is ASCII but for the text of rows (a payload is at most 1 MiB
 * by default). The longest rows are workspace blobs, one line of base64 each, 4/3 of the blob's
 * bytes: a file at the default ceiling (10 MB, `maxFileBytes`) is a line of about 13.4 MB, and a
 * file of up to about 384 MiB fits. Holding a line costs at most this much, and a line that fits
 * about twice that for a moment, when its pieces are joined.
 */
export const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH;

export interface TextLine {
  /** The line without its "\n" (or "\r\n"), decoded as UTF-8. */
  text: string;
  /** False for a last line with no newline. */
  complete: boolean;
}

/** Lines of a UTF-8 stream (`name` names it in a refusal). */
export async function* dumpLines(readable: AsyncIterable<Buffer | string>, name: string): AsyncGenerator<TextLine> {
  let pieces: Buffer[] = [];
  let held = 0;
  let lineNo = 0;
  const tooLong = (bytes: number) =>
    badDump(`${name} line ${lineNo + 1}`, `is longer than ${MAX_LINE_BYTES} bytes (${bytes} read so far), the longest line a dump may have: no row Stead writes is that long`);
  const take = (last: Buffer, complete: boolean): TextLine => {
    const length = held + last.length;
    const final = last.length > 0 ? last[last.length - 1] : pieces[pieces.length - 1]?.at(-1);
    // The CR of a CRLF is not the line's: the bound is on the line without it.
    const end = complete && final === CR ? length - 1 : length;
    if (end > MAX_LINE_BYTES) throw tooLong(length);
    lineNo++;
    const bytes = pieces.length === 0 ? last : Buffer.concat([...pieces, last], length);
    pieces = [];
    held = 0;
    return { text: bytes.toString("utf8", 0, end), complete };
  };
  for await (const chunk of readable) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    for (let i = buf.indexOf(LF, start); i >= 0; i = buf.indexOf(LF, start)) {
      yield take(buf.subarray(start, i), true);
      start = i + 1;
    }
    if (start < buf.length) {
      const rest = buf.subarray(start);
      // One byte of slack: a CR that the next chunk's LF shows to be the line's end is not counted.
      if (held + rest.length > MAX_LINE_BYTES + 1) throw tooLong(held + rest.length);
      pieces.push(rest);
      held += rest.length;
    }
  }
  if (pieces.length > 0) yield take(Buffer.alloc(0), false);
}
