/**
 * Writes docs/openapi.json from the running app's route declarations; `--check` fails when
 * the committed file differs (CI's drift check).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const target = path.resolve('docs/openapi.json');
const check = process.argv.includes('--check');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-openapi-'));
const config = loadConfig({ DATA_DIR: dataDir, PUBLIC_URL: 'http://localhost:8080', LOG_LEVEL: 'silent', APP_SECRET: 'x'.repeat(32) });
const app = await buildApp(config, { logger: false });
await app.ready();
const document = `${JSON.stringify(app.swagger(), null, 2)}\n`;
await app.close();
fs.rmSync(dataDir, { recursive: true, force: true });

if (check) {
  const committed = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (committed !== document) {
    console.error('docs/openapi.json is out of date: run `npm run openapi` and commit the result.');
    process.exit(1);
  }
  console.log('docs/openapi.json is up to date');
} else {
  fs.writeFileSync(target, document);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}
