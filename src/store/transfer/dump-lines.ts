/**
 * The lines of a dump, read from a stream in time linear in its length, however long one line is
 * (a workspace file is one line of base64: megabytes). Each chunk is searched once for line ends,
 * from where the last search stopped, and a line's pieces are joined once, when its end arrives.
 *
 * Hazard: never append a chunk to the line so far and search that again from its start; each
 * chunk then scans the whole line anew (a 64 MiB line took 184 s).
 */
import { constants } from "node:buffer";
import { badDump } from "./dump-format.js";

const LF = 0x0a;
const CR = 0x0d;

export interface TextLine {
  /** The line without its "\n" (or "\r\n"), decoded as UTF-8. */
  text: string;
  /** False for a last line with no newline. */
  complete: boolean;
}

/** Lines of a UTF-8 stream (`name` names it in a refusal). */
export async function* dumpLines(readable: AsyncIterable<Buffer | string>, name: string): AsyncGenerator<TextLine> {
  let pieces: Buffer[] = [];
  let lineNo = 0;
  const take = (last: Buffer, complete: boolean): TextLine => {
    lineNo++;
    const bytes = pieces.length === 0 ? last : Buffer.concat([...pieces, last]);
    pieces = [];
    const end = complete && bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    if (end > constants.MAX_STRING_LENGTH) {
      throw badDump(`${name} line ${lineNo}`, `is ${end} bytes long, longer than the longest text this runtime can hold (${constants.MAX_STRING_LENGTH} characters): no row Stead writes is that long`);
    }
    return { text: bytes.toString("utf8", 0, end), complete };
  };
  for await (const chunk of readable) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    for (let i = buf.indexOf(LF, start); i >= 0; i = buf.indexOf(LF, start)) {
      yield take(buf.subarray(start, i), true);
      start = i + 1;
    }
    if (start < buf.length) pieces.push(buf.subarray(start));
  }
  if (pieces.length > 0) yield take(Buffer.alloc(0), false);
}
