import fs from 'node:fs';
import path from 'node:path';

/** deploy/haproxy.cfg as shipped: the tests, the fault suite and bench:cluster run this file, not a copy of it. */
export const DEPLOYED_HAPROXY_CFG = path.resolve(import.meta.dirname, '../../deploy/haproxy.cfg');

export interface LoopbackHaproxyOptions {
  /** The port the `http` frontend binds on 127.0.0.1. */
  port: number;
  servers: { name: string; port: number }[];
  /** Replaces the check timing of `default-server` (e.g. `inter 500ms fall 2 rise 1`); the deployed one otherwise. */
  checkTiming?: string;
  /** Lines added to the backend (e.g. a response header naming the server). */
  backendLines?: string[];
  /** No log line per request (`log global` dropped): a benchmark measures forwarding, not logging. */
  withoutRequestLog?: boolean;
  /**
   * The TLS bind on 127.0.0.1:port with this PEM (certificate and key). Without it the proxy is
   * plain http only (withoutTls): the fault suite and bench:cluster measure forwarding, not TLS.
   */
  tls?: { port: number; pem: string };
}

/**
 * deploy/haproxy.cfg rewritten for loopback: the frontend binds 127.0.0.1:port, the servers
 * are 127.0.0.1 ports instead of compose's names, and what only makes sense in compose goes
 * (Docker's resolver, the container health frontend). Every other line (timeouts, the
 * per-client cap, X-Forwarded-For handling, checks, retry rules) is the deployed one.
 */
export function loopbackHaproxyConfig(options: LoopbackHaproxyOptions): string {
  let config = fs.readFileSync(DEPLOYED_HAPROXY_CFG, 'utf8');
  config = removeSection(config, 'resolvers docker');
  config = removeSection(config, 'frontend health');
  // Whoever runs the tests runs HAProxy: no switch to the container's haproxy user.
  config = replaceOnce(config, /^\s*user haproxy\n\s*group haproxy\n/m, '');
  config = replaceOnce(config, /^(\s*)bind :8080$/m, `$1bind 127.0.0.1:${options.port}`);
  config = options.tls ? replaceOnce(config, TLS_BIND, `$1bind 127.0.0.1:${options.tls.port} ssl crt ${options.tls.pem}$2`) : withoutTls(config);
  config = replaceOnce(config, /^(\s*default-server check) (.*?) resolvers docker init-addr \S+$/m, (_m, head: string, timing: string) => `${head} ${options.checkTiming ?? timing}`);
  config = config.replace(/^\s*server app\d+ app\d+:8080\n/gm, '');
  if (options.withoutRequestLog) config = replaceOnce(config, /^\s*log global\n/m, '');
  const extra = [...(options.backendLines ?? []), ...options.servers.map((s) => `server ${s.name} 127.0.0.1:${s.port}`)];
  return replaceOnce(config, /^(backend fromagerie\n(?:[ \t].*\n|#.*\n)*)/m, (section: string) => `${section}${extra.map((line) => `    ${line}\n`).join('')}`);
}

const TLS_BIND = /^(\s*)bind :8443 ssl crt \S+( .*)$/m;
const REDIRECT = /^\s*http-request redirect prefix .* unless \{ ssl_fc \}\n/m;

/**
 * A frontend (or a whole config) of deploy/haproxy.cfg without its TLS bind and the redirect of
 * plain http to https: what was there before TLS, for tests that speak plain http to the proxy.
 */
export function withoutTls(config: string): string {
  return replaceOnce(replaceOnce(config, /^[ \t]*bind :8443 ssl .*\n/m, ''), REDIRECT, '');
}

/** Drops a top-level section (its header line, its indented lines and the comments just above it). */
function removeSection(config: string, header: string): string {
  const pattern = new RegExp(`(?:^#.*\\n)*^${header}\\n(?:[ \\t].*\\n?)*\\n?`, 'm');
  return replaceOnce(config, pattern, '');
}

function replaceOnce(text: string, pattern: RegExp, replacement: string | ((...args: string[]) => string)): string {
  if (!pattern.test(text)) throw new Error(`deploy/haproxy.cfg changed: ${pattern} no longer matches; update test/helpers/haproxy-config.ts`);
  return text.replace(pattern, replacement as string);
}
