/**
 * Review 2 (item 11): the line reader refuses a line longer than the runtime's longest string
 * (about 512 MiB), but only once the line's END arrives: until then it keeps every piece in
 * memory, and at the end joins them into one more buffer of the same size. A 1 GiB line (a
 * sparse file: no disk) costs about 2 GiB of memory before the refusal; an 8 GiB one 16 GiB; a
 * line past 4 GiB is refused as "cannot be read (The value of "size" is out of range ...)".
 * Expected: the refusal as soon as the line passes the bound, memory bounded by it.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifiedDump } from "../../src/store/transfer/index.js";
import { MAX_LINE_BYTES } from "../../src/store/transfer/dump-lines.js";
import { BIN, requireBuild, tempDir } from "../cli-helpers.js";

const HEADER = JSON.stringify({ "stead-export": 1, schema: 12, source: "sqlite", digest: "sha256-sum", tables: { runs: 1 } });

describe.skipIf(!existsSync("/usr/bin/time"))("a dump whose second line is 1 GiB long", () => {
  let dir = "";
  let dump = "";
  beforeAll(() => {
    requireBuild();
    dir = tempDir("stead-huge-line-");
    dump = join(dir, "huge.dump");
    const fd = openSync(dump, "w");
    writeSync(fd, `${HEADER}\n`);
    // A sparse gigabyte of NUL bytes, then the line's end.
    writeSync(fd, "\n", HEADER.length + 1 + 1024 ** 3);
    closeSync(fd);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is refused with memory bounded by the longest line the reader takes, not by the line", () => {
    const r = spawnSync("/usr/bin/time", ["-f", "maxrss=%M", process.execPath, BIN, "import", dump, "--store", join(dir, "t", "s.db")], { encoding: "utf8", timeout: 120_000 });
    const rssKiB = Number(/maxrss=(\d+)/.exec(r.stderr)?.[1]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/longer than/);
    // The bound is 536,870,888 bytes; a reader that stops there needs well under 1 GiB.
    expect(rssKiB * 1024, `peak RSS ${Math.round(rssKiB / 1024)} MiB for a 1,024 MiB line`).toBeLessThan(1024 ** 3);
  }, 150_000);
});

describe("a dump whose second line never ends", () => {
  it("is refused once the line passes the bound: what is read of it is at most the bound and one chunk", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    // The same chunk again and again (no memory), 64 MiB past the bound, then the line's end.
    const total = MAX_LINE_BYTES + 64 * 1024 * 1024;
    let pulled = 0;
    function* source(): Generator<Buffer> {
      yield Buffer.from(`${HEADER}\n`);
      while (pulled < total) {
        pulled += chunk.length;
        yield chunk;
      }
      yield Buffer.from("\n");
    }
    const refusal = await VerifiedDump.from(() => Readable.from(source()), "the stream").then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect({ code: refusal?.code, message: refusal?.message }).toEqual({ code: "STEAD_BAD_DUMP", message: expect.stringMatching(/line 2 is longer than 536870888 bytes/) as unknown });
    expect(pulled, "bytes of the line read before the refusal").toBeLessThanOrEqual(MAX_LINE_BYTES + 2 * chunk.length);
  }, 120_000);
});
