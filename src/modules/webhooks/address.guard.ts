import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may point (SSRF, decisions.md §8): only addresses ipaddr.js classifies as
 * `unicast`, a maintained list of the special-purpose registries, rather than ranges of our
 * own that miss the rarer forms. Outside production loopback is allowed too, so a developer
 * can receive on their own machine.
 *
 * IPv6 that embeds IPv4 is where hand-written lists leak. IPv4-mapped (::ffff:a.b.c.d) is
 * judged as the IPv4 address it is: the socket connects to that over IPv4. Every other form
 * (IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, 6to4, NAT64, Teredo) reaches
 * its embedded IPv4 only through a tunnel, translator or relay on someone's network, which is
 * exactly what the guard cannot see, so it is refused whatever it embeds.
 */
export class AddressGuard {
  constructor(private readonly options: { allowLoopback: boolean }) {}

  /** Whether an IP address (v4 or v6 literal) may be connected to; anything unparseable may not. */
  allows(address: string): boolean {
    const range = rangeOf(address);
    return range === 'unicast' || (range === 'loopback' && this.options.allowLoopback);
  }
}

/**
 * The special-purpose range an address belongs to, by ipaddr.js's names, `unicast` for an
 * ordinary public one; `invalid` when it is no IP literal. Exported for the tests' table.
 */
export function rangeOf(text: string): string {
  // node:net's parser first: ipaddr.js also accepts legacy IPv4 forms (0x7f.1) we never mean to.
  const family = isIP(text);
  if (family === 0) return 'invalid';
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads exactly `::a.b.c.d` as ::ffff:a.b.c.d, and getaddrinfo writes IPv4-compatible
    // addresses that way: the URL parser's canonical hex form (zone dropped: it changes no range) is
    // read right.
    address = family === 4 ? ipaddr.parse(text) : ipaddr.parse(new URL(`http://[${text.replace(/%.*$/, '')}]`).hostname.slice(1, -1));
  } catch {
    return 'invalid';
  }
  if (address.kind() === 'ipv4') return address.range();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  const range = v6.range();
  // ipaddr.js names :: and ::1 but calls the rest of ::/96 unicast; it is IPv4-compatible
  // (deprecated, RFC 4291 §2.5.5.1), which some kernels still tunnel to the embedded IPv4.
  if (range === 'unicast' && v6.parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  return range;
}
