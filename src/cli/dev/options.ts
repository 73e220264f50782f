import type { parseArgs } from 'node:util';

/** Every developer command's flags (each command says which it takes: src/cli/dev/commands.ts). */
export const DEV_OPTIONS = {
  'api-base': { type: 'string' },
  'api-key': { type: 'string' },
  format: { type: 'string' },
  'forward-to': { type: 'string' },
  events: { type: 'string', multiple: true },
  after: { type: 'string' },
  resume: { type: 'boolean' },
  header: { type: 'string', short: 'H', multiple: true },
  timeout: { type: 'string' },
  'print-secret': { type: 'boolean' },
  list: { type: 'boolean' },
  status: { type: 'string' },
  method: { type: 'string' },
  path: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type DevValues = ReturnType<typeof parseArgs<{ options: typeof DEV_OPTIONS; allowPositionals: true }>>['values'];
