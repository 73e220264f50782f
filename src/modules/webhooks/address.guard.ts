import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not point (SSRF, decisions.md §8): loopback, private, link-local,
 * carrier-grade NAT, multicast, reserved and documentation ranges, and NAT64, which could
 * reach any of them. BlockList applies the IPv4 rules to IPv4-mapped IPv6 (::ffff:127.0.0.1)
 * too. Outside production loopback is allowed, so a developer can receive on their own machine.
 */
const FORBIDDEN: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];
const LOOPBACK: ReadonlyArray<[string, number, 'ipv4' | 'ipv6']> = [
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
];

export class AddressGuard {
  readonly #refused = new BlockList();

  constructor(options: { allowLoopback: boolean }) {
    for (const [network, prefix, family] of FORBIDDEN) this.#refused.addSubnet(network, prefix, family);
    if (!options.allowLoopback) for (const [network, prefix, family] of LOOPBACK) this.#refused.addSubnet(network, prefix, family);
  }

  /** Whether an IP address (v4 or v6 literal) may be connected to. */
  allows(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    return !this.#refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}
