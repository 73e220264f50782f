import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ValidationFailedError } from '../../kernel/errors.js';

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
 * Refuses (400) a URL a webhook may not be registered with: not absolute http(s), credentials
 * or a fragment in it, an IP literal the guard refuses, or, when `resolve` (production), a
 * host any of whose addresses it refuses.
 */
export async function checkWebhookUrl(guard: AddressGuard, text: string, resolve: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw ValidationFailedError.field('url', 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw ValidationFailedError.field('url', 'must use http or https');
  if (url.username || url.password) throw ValidationFailedError.field('url', 'must not carry credentials: authenticate deliveries by their signature');
  if (url.hash) throw ValidationFailedError.field('url', 'must not have a fragment');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = ValidationFailedError.field('url', 'must point at a public address (loopback, private and link-local addresses are refused)');
  if (isIP(host) !== 0) {
    if (!guard.allows(host)) throw refused;
    return;
  }
  if (!resolve) return;
  const addresses = await dns.lookup(host, { all: true }).catch(() => []);
  if (addresses.length === 0) throw ValidationFailedError.field('url', `host ${host} could not be resolved`);
  // Any refused address refuses the URL: which one a connection gets is up to the resolver.
  if (!addresses.every((entry) => guard.allows(entry.address))) throw refused;
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
