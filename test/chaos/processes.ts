import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A child of the suite in a process group of its own, its output kept for the failure report. */
export interface Managed {
  name: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<Managed>();
const OUTPUT_CHUNKS = 400;

export function alive(managed: Managed): boolean {
  return managed.child.pid !== undefined && managed.child.exitCode === null && managed.child.signalCode === null;
}

/** Starts `command` detached (its own process group), so a kill reaches whatever it started. */
export function startProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Managed {
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > OUTPUT_CHUNKS) output.splice(0, output.length - OUTPUT_CHUNKS);
  };
  // A command that cannot start (haproxy not installed): said in its output, the wait for it then fails.
  child.on('error', (error) => output.push(`\n[${name} could not start: ${error.message}]\n`));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      output.push(`\n[${name} exited: ${signal ?? code}]\n`);
      resolve({ code, signal });
    });
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const managed = { name, child, output, exited };
  running.add(managed);
  void exited.then(() => running.delete(managed));
  return managed;
}

/** Signals the whole process group (the child leads it). */
export function signalGroup(managed: Managed, signal: NodeJS.Signals): void {
  if (!alive(managed) || managed.child.pid === undefined) return;
  try {
    process.kill(-managed.child.pid, signal);
  } catch {
    // already gone
  }
}

/** SIGKILL of every process group the suite started and has not seen exit (the watchdog's and afterEach's). */
export function killEverything(): void {
  for (const managed of running) signalGroup(managed, 'SIGKILL');
}

export async function killAndWait(managed: Managed): Promise<void> {
  signalGroup(managed, 'SIGKILL');
  await managed.exited;
}

export function outputOf(managed: Managed, lastChars = 4000): string {
  return managed.output.join('').slice(-lastChars);
}

// Last resort: no child outlives the test process.
process.on('exit', killEverything);

/**
 * Kills every process this suite started after `ms` (a scenario that hangs would otherwise leave
 * instances, HAProxy and the fault proxies' peers running); the test then fails on its own
 * timeout. Returns the disarm function.
 */
export function watchdog(ms: number, onFire: () => void): () => void {
  const timer = setTimeout(() => {
    onFire();
    killEverything();
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
