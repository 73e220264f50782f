/**
 * Writes, from the declarations of the environment variables (src/config/variables.ts), the
 * README's table between its two markers and `.env.example`; `--check` fails when either differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { environmentExample, environmentTable } from '../src/config/variable.js';
import { SETTINGS } from '../src/config/variables.js';

export const BEGIN = '<!-- config-docs: generated from src/config/variables.ts by `npm run config-docs`; edit there -->';
export const END = '<!-- /config-docs -->';

/** The README with its table as the declarations make it. */
export function withTable(readme: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README.md: the markers ${BEGIN} … ${END} are missing`);
  return `${readme.slice(0, begin + BEGIN.length)}\n${environmentTable(SETTINGS)}\n${readme.slice(end)}`;
}

/** `.env.example` as the declarations make it. */
export function envExample(): string {
  return environmentExample(SETTINGS);
}

if (import.meta.url === pathToFileURL(path.resolve(process.argv[1] ?? '')).href) {
  const check = process.argv.includes('--check');
  const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined);
  const targets = [
    { file: path.resolve('README.md'), label: 'README.md: the environment table', make: (current: string | undefined) => withTable(current ?? '') },
    { file: path.resolve('.env.example'), label: '.env.example', make: () => envExample() },
  ];
  let stale = false;
  for (const { file, label, make } of targets) {
    const current = read(file);
    const updated = make(current);
    if (check) {
      if (updated !== current) {
        console.error(`${label} is out of date: run \`npm run config-docs\` and commit the result.`);
        stale = true;
      } else console.log(`${label} is up to date`);
    } else if (updated !== current) {
      fs.writeFileSync(file, updated);
      console.log(`${label}: written`);
    }
  }
  if (stale) process.exit(1);
}
