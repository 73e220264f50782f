import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { accountPasswordProblem } from '../modules/customers/customers.module.js';
import { Refusal } from './cli.errors.js';

/** Where compose reads the deployment's secrets (`docker compose --env-file deploy/secrets.env`). */
export const DEFAULT_SECRETS_FILE = 'deploy/secrets.env';

/** A passphrase the admin password rule accepts (24 characters of base64url; redrawn in the unlikely case it is refused). */
function adminPassword(username: string): string {
  for (;;) {
    const candidate = randomBytes(18).toString('base64url');
    if (!accountPasswordProblem(candidate, username)) return candidate;
  }
}

/** The file's text: each secret drawn from the system's CSPRNG, none ever printed. */
export function secretsFileText(adminUsername: string): string {
  return [
    '# The deployment\'s secrets, made once by `fromagerie secrets init`, never overwritten by it.',
    '# Keep this file (mode 0600) and back it up with the database: a new APP_SECRET cannot read',
    '# the stored webhook secrets, sessions or cursors (rotate with docs/operations.md instead).',
    `APP_SECRET=${randomBytes(48).toString('base64url')}`,
    `ADMIN_PASSWORD=${adminPassword(adminUsername)}`,
    `POSTGRES_PASSWORD=${randomBytes(24).toString('hex')}`,
    '',
  ].join('\n');
}

export type SecretsInitOutcome = { written: string } | { kept: string };

/**
 * Writes the secrets file once: created exclusively (`wx`, so two runs at once cannot both
 * write) with mode 0600 from its first byte. An existing file is never touched, whatever it
 * holds: running the README's commands again changes no secret.
 */
export function initSecrets(file: string, adminUsername: string): SecretsInitOutcome {
  const target = path.resolve(file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  let descriptor: number;
  try {
    descriptor = fs.openSync(target, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const mode = fs.statSync(target).mode & 0o777;
      if (mode & 0o077) throw new Refusal(`${file} exists but is readable by others (mode ${mode.toString(8).padStart(4, '0')}): kept unchanged; restrict it with chmod 600 ${file}`);
      return { kept: file };
    }
    throw error;
  }
  try {
    fs.writeSync(descriptor, secretsFileText(adminUsername));
    fs.fsyncSync(descriptor);
    fs.closeSync(descriptor);
  } catch (error) {
    // A half-written file would be kept by the next run: none is left behind.
    fs.closeSync(descriptor);
    fs.rmSync(target, { force: true });
    throw error;
  }
  return { written: file };
}
