import fs from 'node:fs';
import path from 'node:path';
import { loopbackHaproxyConfig } from '../helpers/haproxy-config.js';
import { waitForPort } from '../helpers/private-services.js';
import { startProcess, type Managed } from './processes.js';

/**
 * deploy/haproxy.cfg for one run (test/helpers/haproxy-config.ts: loopback ports instead of
 * compose names, no Docker resolver) with faster checks (`inter 500ms fall 2 rise 1`), so an
 * instance that turns unready leaves the rotation within about a second, well inside the
 * instances' DRAIN_DELAY_MS (2 s here), and a restarted one is back a check after it answers.
 * Everything else, the retry rules first, is the deployed file's. Each answer says which
 * server gave it (`X-Chaos-Server`), for the record.
 */
export function haproxyConfig(options: { port: number; servers: { name: string; port: number }[] }): string {
  return loopbackHaproxyConfig({ ...options, checkTiming: 'inter 500ms fall 2 rise 1', backendLines: ['http-response set-header X-Chaos-Server %[srv_name]'] });
}

/** Debian's haproxy in the foreground (`-db`) on a config written into `dir`. */
export async function startHaproxy(dir: string, options: { port: number; servers: { name: string; port: number }[] }): Promise<Managed> {
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, haproxyConfig(options));
  const haproxy = startProcess('haproxy', 'haproxy', ['-db', '-f', file], { PATH: process.env.PATH });
  await waitForPort(options.port, 10_000);
  return haproxy;
}
