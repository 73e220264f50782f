import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const dir = path.resolve('packages/sdk/test-types');
const tsc = path.resolve('node_modules/typescript/bin/tsc');

/**
 * One tsc run (strict, NodeNext, the SDK as a consumer imports it) over the fixtures, the
 * README's quick-start, and a copy of the event switch with one case removed. The fixtures
 * must compile (so every @ts-expect-error in them is still an error) and the copy must not
 * (so the `never` default really checks that every kind is handled).
 */
it('wrong paths, bodies and statuses are type errors, and a switch over event.type with a never default is exhaustive', async () => {
  const tag = `${process.pid}-${Date.now()}`;
  const broken = path.join(dir, `broken-${tag}.fixture.ts`);
  const config = path.join(dir, `tsconfig-${tag}.json`);
  const source = await readFile(path.join(dir, 'events.fixture.ts'), 'utf8');
  const withoutCase = source.replace("    case 'webhook.test':\n      return 'a test';\n", '');
  expect(withoutCase).not.toBe(source);
  await writeFile(broken, withoutCase);
  const base = JSON.parse(await readFile(path.join(dir, 'tsconfig.json'), 'utf8'));
  await writeFile(config, JSON.stringify({ ...base, files: [...base.files, path.basename(broken)] }));
  try {
    const run = await promisify(execFile)(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { timeout: 180_000 }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    const errors = run.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    expect(errors.filter((line) => !line.startsWith(path.relative(process.cwd(), broken)) && !line.includes(path.basename(broken)))).toEqual([]);
    expect(errors).toEqual([expect.stringMatching(/"webhook\.test".*not assignable to parameter of type 'never'|not assignable to parameter of type 'never'/)]);
    expect(run.code).not.toBe(0);
  } finally {
    await rm(broken, { force: true });
    await rm(config, { force: true });
  }
}, 240_000);
