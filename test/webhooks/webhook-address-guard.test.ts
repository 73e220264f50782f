import dnsCallbacks from 'node:dns';
import dns from 'node:dns/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AddressGuard, rangeOf } from '../../src/modules/webhooks/address.guard.js';
import { WebhookSender } from '../../src/modules/webhooks/webhook.sender.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/http.js';

/**
 * The SSRF guard (decisions.md §8) against the address forms hand-written range lists miss:
 * IPv6 that embeds IPv4 or private space, and host names whose addresses are only partly public.
 */
const production = new AddressGuard({ allowLoopback: false });
const development = new AddressGuard({ allowLoopback: true });

const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:93.184.216.34'];

const REFUSED: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['10.1.2.3', 'private IPv4'],
  ['172.16.0.1', 'private IPv4'],
  ['192.168.0.10', 'private IPv4'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.2.1', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['240.0.0.1', 'reserved'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['fe80::1', 'IPv6 link-local'],
  ['fe80::1%1', 'IPv6 link-local with a zone'],
  ['fd00::1', 'unique local'],
  ['fc00::1', 'unique local'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'IPv6 multicast'],
  ['2001:db8::1', 'IPv6 documentation'],
  ['100::1', 'discard-only'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, as a URL writes it'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['::93.184.216.34', 'IPv4-compatible, even public: tunnelled by some kernels'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
  ['::ffff:0:93.184.216.34', 'IPv4-translated, even public'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of private'],
  ['2002:5db8:d822::1', '6to4, even public: reached through a relay'],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
  ['64:ff9b::a00:1', 'NAT64 of private'],
  ['64:ff9b::93.184.216.34', 'NAT64, even public: reached through a translator'],
  ['64:ff9b:1::7f00:1', 'local-use NAT64 (/48)'],
  ['64:ff9b:1:7f00:1::', 'local-use NAT64, IPv4 at a /64 position'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:0:7f00:1::', 'Teredo with a loopback server'],
  ['localhost', 'not an IP literal'],
  ['127.1', 'legacy IPv4 shorthand'],
  ['0x7f.0.0.1', 'legacy hex IPv4'],
  ['', 'empty'],
];

describe('the address guard (unit)', () => {
  it.each(PUBLIC)('allows the public address %s', (address) => {
    expect(rangeOf(address)).toBe('unicast');
    expect(production.allows(address)).toBe(true);
    expect(development.allows(address)).toBe(true);
  });

  it.each(REFUSED)('refuses %s (%s) in production', (address) => {
    expect(production.allows(address)).toBe(false);
  });

  it('names ranges as ipaddr.js does, and reads ::a.b.c.d as IPv4-compatible, not as IPv4-mapped', () => {
    const names = ['::127.0.0.1', '::ffff:127.0.0.1', '::ffff:0:127.0.0.1', '2002:7f00:1::', '64:ff9b::7f00:1', '64:ff9b:1::1', '2001:0:7f00:1::', 'fec0::1'].map(rangeOf);
    expect(names).toEqual(['ipv4Compatible', 'loopback', 'rfc6145', '6to4', 'rfc6052', 'rfc6052', 'teredo', 'deprecatedSiteLocal']);
  });

  it('outside production allows loopback, and only loopback, so a developer can receive locally', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(development.allows(address), address).toBe(true);
    const stillRefused = REFUSED.map(([address]) => address).filter((address) => !['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(address));
    for (const address of stillRefused) expect(development.allows(address), address).toBe(false);
  });
});

describe('the sender at delivery', () => {
  const sender = new WebhookSender({ timeoutMs: 2000, guard: production, socketsPerEndpoint: 1 });
  afterAll(() => sender.close());
  afterEach(() => vi.restoreAllMocks());

  it('refuses an IPv6 literal embedding loopback without connecting', async () => {
    for (const url of ['http://[::127.0.0.1]:9/x', 'http://[::ffff:0:127.0.0.1]:9/x', 'http://[64:ff9b::7f00:1]:9/x', 'http://[2002:7f00:1::]:9/x', 'http://[fec0::1]:9/x']) {
      const result = await sender.send(url, {}, '{}');
      expect(result.error, url).toContain('may not reach');
    }
  });

  it('does not connect to a host that resolves to such an address', async () => {
    vi.spyOn(dnsCallbacks, 'lookup').mockImplementation(((_host: string, _options: unknown, callback: (err: null, addresses: dnsCallbacks.LookupAddress[]) => void) => {
      callback(null, [{ address: '::ffff:0:7f00:1', family: 6 }, { address: '64:ff9b::a00:1', family: 6 }]);
    }) as unknown as typeof dnsCallbacks.lookup);
    const result = await sender.send('http://hooks.example.test:9/x', {}, '{}');
    expect(result.error).toContain('may not reach');
  });
});

describe('registration in production (HTTP)', () => {
  let app: TestApp;
  let staff: Record<string, string>;
  beforeAll(async () => {
    app = await createTestApp({ env: 'production' });
    staff = bearer(await app.key(['admin']));
  });
  afterAll(() => app.close());
  afterEach(() => vi.restoreAllMocks());

  const stored = () => app.database.db.selectFrom('webhooks').select('id').execute();

  it('refuses URLs whose IPv6 literal embeds IPv4 or private space: 422 naming url, nothing stored', async () => {
    const before = await stored();
    for (const host of ['[::127.0.0.1]', '[::ffff:0:127.0.0.1]', '[2002:7f00:1::]', '[2002:a9fe:a9fe::]', '[64:ff9b::127.0.0.1]', '[64:ff9b:1::a00:1]', '[fec0::1]', '[2001:0:7f00:1::]']) {
      const res = await app.http.post('/v2/webhooks', { headers: staff, json: { url: `http://${host}/hooks`, events: ['cheese.*'] } });
      expect(res.status, host).toBe(422);
      expect(res.body.errors, host).toEqual([{ field: 'url', message: 'must point at a public address (loopback, private and link-local addresses are refused)' }]);
    }
    expect(await stored()).toEqual(before);
  });

  it('refuses a host when any one of its addresses is refused, though another is public', async () => {
    const before = await stored();
    const lookup = vi.spyOn(dns, 'lookup').mockResolvedValue([{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }] as never);
    const res = await app.http.post('/v2/webhooks', { headers: staff, json: { url: 'https://mixed.example.test/hooks', events: ['cheese.*'] } });
    expect(lookup).toHaveBeenCalledWith('mixed.example.test', { all: true });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['url']);
    expect(await stored()).toEqual(before);
  });

  it('accepts a host whose every address is public, and public IP literals', async () => {
    vi.spyOn(dns, 'lookup').mockResolvedValue([{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1111', family: 6 }] as never);
    for (const url of ['https://public.example.test/hooks', 'http://93.184.216.34/hooks', 'http://[2606:4700::1111]/hooks']) {
      const res = await app.http.post('/v2/webhooks', { headers: staff, json: { url, events: ['cheese.*'] } });
      expect(res.status, url).toBe(201);
    }
  });
});
