import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One key ring (issue 29 §3): keys are derived from APP_SECRET in src/kernel/key-ring.ts alone,
 * and the secret itself goes no further than the configuration that reads it. Modules, pages
 * and the kernel get keys (`Keys`), never the secret string.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const ALLOWED = (file: string) => file === 'src/kernel/key-ring.ts' || file === 'src/config.ts' || file.startsWith('src/config/');
/** A key derivation (node:crypto's HKDF, or PBKDF2/scrypt over the secret), or the secret by its name. */
const DERIVES = /\bhkdf(?:Sync)?\b/;

export function keyRingViolations(files: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of files) {
    if (ALLOWED(file)) continue;
    source.split('\n').forEach((line, i) => {
      // Comments may name the variable (what a key is derived from); code may not.
      const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '').replace(/\/\*.*?\*\//g, '');
      if (DERIVES.test(code)) found.push(`${file}:${i + 1}: derives a key outside the key ring: ${line.trim()}`);
      if (/\bappSecret(?:Previous)?\b/.test(code)) found.push(`${file}:${i + 1}: handles APP_SECRET outside the key ring and the configuration: ${line.trim()}`);
    });
  }
  return found;
}

function sources(): Map<string, string> {
  const files = fs.readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  return new Map(files.map((file) => [`src/${file.split(path.sep).join('/')}`, fs.readFileSync(path.join(ROOT, 'src', file), 'utf8')]));
}

describe('the key ring is the one place keys come from', () => {
  it('nothing in src/ but src/kernel/key-ring.ts and the configuration derives a key or receives APP_SECRET', () => {
    expect(keyRingViolations(sources())).toEqual([]);
  });

  it('would catch a module deriving its own key, or given the secret', () => {
    const planted = new Map([
      ['src/modules/webhooks/webhooks.module.ts', "const key = hkdfSync('sha256', secret, '', 'x', 32);"],
      ['src/http/pages.ts', '  appSecret: string;'],
      ['src/modules.ts', '    appSecret: config.appSecret,'],
      ['src/kernel/pagination.ts', "import { hkdf } from 'node:crypto';"],
      ['src/kernel/key-ring.ts', "hkdfSync('sha256', secret, salt, info, 32)"],
      ['src/config/variables.ts', "appSecret: variable('APP_SECRET', {"],
      ['src/modules/dashboard/reveal.ts', ' * sealed to this session (AES-GCM under APP_SECRET, see appSecret)'],
    ]);
    expect(keyRingViolations(planted)).toEqual([
      expect.stringMatching(/^src\/modules\/webhooks\/webhooks\.module\.ts:1: derives a key/),
      expect.stringMatching(/^src\/http\/pages\.ts:1: handles APP_SECRET/),
      expect.stringMatching(/^src\/modules\.ts:1: handles APP_SECRET/),
      expect.stringMatching(/^src\/kernel\/pagination\.ts:1: derives a key/),
    ]);
  });
});
