/**
 * Writes the README's table of environment variables from their declarations
 * (src/config/variables.ts), between its two markers; `--check` fails when the README differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { environmentTable } from '../src/config/variable.js';
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

if (import.meta.url === pathToFileURL(path.resolve(process.argv[1] ?? '')).href) {
  const target = path.resolve('README.md');
  const readme = fs.readFileSync(target, 'utf8');
  const updated = withTable(readme);
  if (process.argv.includes('--check')) {
    if (updated !== readme) {
      console.error('README.md: the environment table is out of date: run `npm run config-docs` and commit the result.');
      process.exit(1);
    }
    console.log('README.md: the environment table is up to date');
  } else if (updated !== readme) {
    fs.writeFileSync(target, updated);
    console.log('README.md: environment table written');
  }
}
