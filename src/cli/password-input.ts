import { Refusal, UsageError } from './cli.errors.js';

/** Reads the first line of stdin (without its line break); undefined when stdin ends first. */
async function firstLineOfStdin(): Promise<string | undefined> {
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) return line.replace(/\r$/, '');
    return undefined;
  } finally {
    lines.close();
  }
}

/** Refuses a password the accounts' rules refuse, before anything is changed (the rule ADMIN_PASSWORD obeys too). */
async function checkNewPassword(password: string, username: string): Promise<void> {
  const { accountPasswordProblem } = await import('../modules/customers/customers.module.js');
  const problem = accountPasswordProblem(password, username);
  if (problem) throw new Refusal(`the password ${problem}`);
}

/**
 * --password-stdin's password. From a pipe or a file: its first line, as `docker login
 * --password-stdin` does. From a terminal: asked on stderr with echo off, checked, then asked
 * again to catch a typo nobody could see; a mismatch changes nothing (exit 1).
 */
export async function passwordFromStdin(username: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const line = await firstLineOfStdin();
    if (line === undefined || line === '') throw new UsageError('--password-stdin: no password on the first line of stdin');
    await checkNewPassword(line, username);
    return line;
  }
  const { openHiddenPrompt, PromptCancelled } = await import('./hidden-prompt.js');
  const prompt = openHiddenPrompt();
  try {
    const password = await prompt.ask('New password: ');
    if (password === '') throw new Refusal('no password typed: nothing was changed');
    await checkNewPassword(password, username);
    if ((await prompt.ask('Repeat it: ')) !== password) throw new Refusal('the two passwords typed differ: nothing was changed');
    return password;
  } catch (error) {
    throw error instanceof PromptCancelled ? new Refusal(error.message) : error;
  } finally {
    prompt.close();
  }
}
