import { BlockList, isIP } from 'node:net';

/**
 * Which peers may tell us the client's address (X-Forwarded-For): TRUST_PROXY. The same
 * predicate decides `request.ip` (Fastify walks X-Forwarded-For from the right, with
 * @fastify/proxy-addr, and the client is the first entry not sent by a trusted proxy) and which
 * connections the per-client connection cap leaves alone (request-guards.ts).
 */
export type ProxyTrust = (address: string, hop: number) => boolean;

/** Names for the usual ranges, as proxy-addr (Express) spells them. */
const NAMED_RANGES: ReadonlyMap<string, readonly string[]> = new Map(Object.entries({
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
}));

/**
 * What `TRUST_PROXY=true` means: the loopback, link-local and private ranges, never the whole
 * Internet. A client reaching an instance directly from a public address is then its own
 * address whatever X-Forwarded-For it forges; a proxy on the same host or private network is
 * believed. (Before issue 20 `true` believed every peer: a forged header was a fresh bucket.)
 */
export const PRIVATE_NETWORKS: readonly string[] = ['loopback', 'linklocal', 'uniquelocal'];

/** Why an entry of TRUST_PROXY is refused, or undefined when it is an address, a CIDR or a range name. */
export function trustEntryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.has(entry)) return undefined;
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return `"${entry}" is not an IP address or CIDR (such as 172.28.0.0/24, 127.0.0.1, fd00::/8), nor one of ${[...NAMED_RANGES.keys()].join(', ')}`;
  if (prefix === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(prefix) || Number(prefix) > bits) return `"${entry}": the prefix length must be 0 to ${bits} for an IPv${family} range`;
  return undefined;
}

/**
 * Fastify's `trustProxy`: false (X-Forwarded-For ignored, the peer is the client), or a
 * predicate over the configured addresses and ranges (`true`: PRIVATE_NETWORKS). An IPv4
 * peer arriving IPv4-mapped (`::ffff:172.28.0.5`) matches its IPv4 range.
 */
export function proxyTrust(setting: boolean | readonly string[]): ProxyTrust | false {
  if (setting === false) return false;
  const entries = setting === true ? PRIVATE_NETWORKS : setting;
  if (entries.length === 0) return false;
  const trusted = new BlockList();
  for (const entry of entries.flatMap((e) => NAMED_RANGES.get(e) ?? [e])) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  return (address) => {
    const family = isIP(address);
    // Not an address (a forwarded entry that is a name, `unknown`, garbage): never a proxy of ours.
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}
