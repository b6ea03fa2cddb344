/**
 * Where a request came from and whether it came over TLS, with or without a TLS-terminating
 * proxy in front (`stead serve --trust-proxy`). Only then are `X-Forwarded-For` and
 * `X-Forwarded-Proto` read: without the flag anyone could send them, so they are ignored.
 *
 * One trusted hop: the proxy appends the address it saw to `X-Forwarded-For`, so the last entry is
 * the one it vouches for; entries before it are whatever the client sent. Likewise the last
 * `X-Forwarded-Proto` value is the proxy's.
 */

export interface RequestOrigin {
  /** The client's address: the slowdown of bad tokens keys on it. */
  address(headers: Headers, socketAddress: string | undefined): string;
  /** Whether the browser reached the server over https (a Secure cookie). */
  secure(headers: Headers): boolean;
}

const last = (header: string | null): string | undefined => {
  const v = header?.split(",").at(-1)?.trim();
  return v === undefined || v === "" ? undefined : v.slice(0, 100);
};

export function requestOrigin(options: { tls: boolean; trustProxy: boolean }): RequestOrigin {
  return {
    address: (headers, socket) => (options.trustProxy ? (last(headers.get("x-forwarded-for")) ?? socket) : socket) ?? "unknown",
    secure: (headers) => options.tls || (options.trustProxy && last(headers.get("x-forwarded-proto"))?.toLowerCase() === "https"),
  };
}
