import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * What `listen` keeps between runs, in the user's configuration directory
 * ($XDG_CONFIG_HOME/fromagerie, else ~/.config/fromagerie), readable by the user alone (0700
 * directory, 0600 files): the signing secret (made on first use, then the same on every run,
 * so a receiver configured once keeps verifying) and, per API and key, the last event a
 * receiver answered (for `--resume`).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config');
  return path.join(base, 'fromagerie');
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Written whole or not at all (a temporary file renamed over it), 0600 from its first byte. */
function writePrivate(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  // A file the user made with looser permissions is tightened rather than trusted.
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

export class ListenState {
  readonly dir: string;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.dir = configDir(env);
  }

  get secretFile(): string {
    return path.join(this.dir, 'listen-secret');
  }

  /** The signing secret, made with `make` the first time. */
  secret(make: () => string): string {
    const existing = readText(this.secretFile)?.trim();
    if (existing && /^whsec_[A-Za-z0-9+/=]{20,}$/.test(existing)) return existing;
    const secret = make();
    writePrivate(this.secretFile, `${secret}\n`);
    return secret;
  }

  #cursors(): Record<string, string> {
    const text = readText(path.join(this.dir, 'cursors.json'));
    if (!text) return {};
    try {
      const parsed = JSON.parse(text) as unknown;
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
    } catch {
      return {};
    }
  }

  /** The last event a receiver answered for this API and key (by the key's prefix, never the key). */
  cursor(scope: string): string | null {
    return this.#cursors()[scope] ?? null;
  }

  saveCursor(scope: string, eventId: string): void {
    writePrivate(path.join(this.dir, 'cursors.json'), `${JSON.stringify({ ...this.#cursors(), [scope]: eventId }, null, 2)}\n`);
  }
}
