import { spawn, type ChildProcess } from 'node:child_process';

/** `npm start`'s server as a child process on `port`, resolved once it prints `until` (a worker prints no docs link). */
export async function startServer(env: NodeJS.ProcessEnv, port: number, until = 'Interactive docs'): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, PORT: String(port) } });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 60_000;
  while (!output.includes(until)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}
