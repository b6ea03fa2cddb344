/**
 * The client a request's address stands for, as the slowdown of bad tokens counts it (slowdown.ts).
 * An IPv4 address is a client of its own. An IPv6 address stands for its /64: the network one
 * subscriber is given, whose 2^64 addresses a client may take one per request at no cost. An
 * IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a dual-stack socket or a proxy reports an IPv4
 * peer) is its IPv4 address. However an address is written (capitals, leading zeros, `::`, a
 * zone, a port some proxies append to X-Forwarded-For), it is the same client. What is no address
 * ("unknown", a proxy's odd entry) is a client of its own, exactly as given.
 *
 * Hazard: a client given more than one /64 (a /56 or /48 is a common assignment) is as many
 * clients as it uses /64s.
 */
import { isIP } from "node:net";

/** `[v6]`, `[v6]:port` or `a.b.c.d:port`: the address inside, still to be checked by isIP. */
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;

export function clientOf(address: string): string {
  const bare = isIP(address) !== 0 ? address : (BRACKETED.exec(address)?.[1] ?? IPV4_WITH_PORT.exec(address)?.[1] ?? address);
  const family = isIP(bare);
  // isIP takes dotted quads only in their one canonical form (no leading zeros, no hex).
  if (family === 4) return bare;
  if (family !== 6) return address;
  const groups = ipv6Groups(bare);
  if (groups === undefined) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16).padStart(4, "0"))
    .join(":")}::/64`;
}

/**
 * The eight 16-bit groups of an address isIP took as IPv6. The WHATWG URL parser canonicalises it
 * (lowercase hex, no leading zeros, the longest run of zero groups as `::`, an embedded dotted quad
 * as two hex groups); only that canonical text is split here. A zone (`%eth0`) names an interface,
 * not a client, and the URL parser refuses it, so it is dropped first.
 */
function ipv6Groups(address: string): number[] | undefined {
  let canonical: string;
  try {
    canonical = new URL(`http://[${address.split("%", 1)[0] ?? ""}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const [head = "", tail, ...more] = canonical.split("::");
  if (more.length > 0) return undefined;
  const before = head === "" ? [] : head.split(":");
  const after = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = tail === undefined ? 0 : 8 - before.length - after.length;
  const groups = [...before, ...Array<string>(Math.max(0, zeros)).fill("0"), ...after].map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  return groups.length === 8 && groups.every((g) => !Number.isNaN(g)) ? groups : undefined;
}
