import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/** Ctrl-C, or Ctrl-D on an empty line, at a hidden prompt: the operator gave up. */
export class PromptCancelled extends Error {}

export interface HiddenPrompt {
  /** Writes `question` to the prompt stream and resolves with the next line typed, never echoed. */
  ask(question: string): Promise<string>;
  /** Restores the terminal's mode and releases the input; safe to call twice. */
  close(): void;
}

/**
 * Reads lines from a terminal with echo off, for passwords.
 *
 * readline in terminal mode puts the input in raw mode (so the terminal echoes nothing) and
 * does the line editing (backspace, arrows) itself; its own echo goes to a stream that drops
 * everything. Raw mode is on from here, before any question is written, so nothing typed after
 * a question appears is echoed. History is off: the lines typed are kept nowhere. Lines typed
 * ahead (or pasted at once) wait in the iterator, not lost between two questions.
 */
export function openHiddenPrompt(input: NodeJS.ReadStream = process.stdin, prompts: NodeJS.WritableStream = process.stderr): HiddenPrompt {
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input, output: silent, terminal: true, historySize: 0 });
  let interrupted = false;
  lines.on('SIGINT', () => {
    interrupted = true;
    lines.close();
  });
  const typed = lines[Symbol.asyncIterator]();
  return {
    async ask(question) {
      prompts.write(question);
      const next = await typed.next();
      // The Enter typed was not echoed either: end the prompt's line.
      prompts.write('\n');
      if (next.done || interrupted) throw new PromptCancelled('cancelled: nothing was changed');
      return next.value as string;
    },
    close: () => lines.close(),
  };
}
