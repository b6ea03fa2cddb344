/**
 * A workspace file or a tarball as an HTTP response. What a run wrote is untrusted: it is never
 * served as a type a browser renders or runs. Text (valid UTF-8 with no NUL byte) is
 * `text/plain; charset=utf-8`; anything else `application/octet-stream` as an attachment. Every
 * such response also carries `X-Content-Type-Options: nosniff` and a sandboxing CSP, so a file
 * that looks like HTML stays text even if opened in a browser tab.
 */

const SANDBOX = "default-src 'none'; sandbox";

const isText = (b: Buffer): boolean => !b.includes(0) && Buffer.from(b.toString("utf8"), "utf8").equals(b);

/** `name` as a Content-Disposition filename: ASCII fallback plus the exact name, percent-encoded (RFC 6266). */
export function attachment(name: string): string {
  const fallback = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 200) || "download";
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

const common = { "X-Content-Type-Options": "nosniff", "Content-Security-Policy": SANDBOX, "Cache-Control": "no-store" };

export function fileResponse(path: string, content: Buffer): Response {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const headers: Record<string, string> = isText(content)
    ? { ...common, "Content-Type": "text/plain; charset=utf-8" }
    : { ...common, "Content-Type": "application/octet-stream", "Content-Disposition": attachment(name) };
  return new Response(new Uint8Array(content), { status: 200, headers: { ...headers, "Content-Length": String(content.length) } });
}

export function tarballResponse(name: string, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: 200, headers: { ...common, "Content-Type": "application/gzip", "Content-Disposition": attachment(name) } });
}
