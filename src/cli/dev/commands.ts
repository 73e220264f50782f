import { parseArgs } from 'node:util';
import { DEV_OPTIONS, type DevValues } from './options.js';

/**
 * The developer commands (issue 30): HTTP clients of a running API, on @fromagerie/sdk, that
 * never load the configuration, a database driver nor the app's modules. Each entry loads its
 * code only when it runs, so `help` and every other command start as fast as before. A new one
 * (`logs tail`) is an entry here and its file beside these.
 */
type DevOption = keyof typeof DEV_OPTIONS;
export type { DevValues };

export interface DevCommand {
  usage: string;
  help: string;
  /** The flags it takes (beyond --api-base, --api-key, --format and --help). */
  options: readonly DevOption[];
  run(values: DevValues, positionals: string[]): Promise<void>;
}

const CONNECTION = 'FROMAGERIE_API_BASE (default http://127.0.0.1:8080/v2) and FROMAGERIE_API_KEY, or --api-base and --api-key';

export const DEV_COMMANDS: Readonly<Record<string, DevCommand>> = {
  listen: {
    usage: 'listen --forward-to URL|PORT|/path [--events order.*,cheese.low_stock] [--after evt_…|now | --resume] [-H "Name: value"]… [--timeout 10s] [--format json] [--print-secret]',
    help: `long-polls the event log and forwards each event, in order and one at a time, to a local receiver (PORT: http://127.0.0.1:PORT/; /path: http://127.0.0.1:3000/path), signed as webhooks are (X-Cheese-Signature and Standard Webhooks) with this machine's listen secret (made once, kept 0600 in $XDG_CONFIG_HOME/fromagerie or ~/.config/fromagerie; --print-secret prints it alone). An unreachable receiver is retried (1, 2, 4 … 30 s) without skipping; any HTTP answer moves on and is saved for --resume. A failed poll is retried, never fatal. Exit 0 on Ctrl-C, 2 usage or an unknown kind, 3 the key refused, 4 the cursor past retention. ${CONNECTION}`,
    options: ['forward-to', 'events', 'after', 'resume', 'header', 'timeout', 'print-secret'],
    run: async (values) => (await import('./listen.js')).listen(values),
  },
  'events resend': {
    usage: 'events resend evt_… --forward-to URL|PORT|/path [-H "Name: value"]… [--timeout 10s] [--format json]',
    help: `reads one event of the log (GET /v2/events/{id}) and forwards it once, signed as listen signs; prints the answer. ${CONNECTION}`,
    options: ['forward-to', 'header', 'timeout'],
    run: async (values, positionals) => (await import('./resend.js')).resend(values, positionals),
  },
  trigger: {
    usage: 'trigger <kind> | trigger --list [--format json]',
    help: `makes the ordinary /v2 calls of a fixture that cause an event of that kind (each POST with its own Idempotency-Key), then prints the events they caused; development and sandbox APIs only. --list lists the kinds and what each fixture does. ${CONNECTION}`,
    options: ['list'],
    run: async (values, positionals) => (await import('./trigger.js')).trigger(values, positionals),
  },
  'logs tail': {
    usage: 'logs tail [--status 4xx|404] [--method POST] [--path /v2/orders] [--format json]',
    help: `long-polls the request log (GET /v2/request-logs, needs read:logs) from now on and prints one line per request your account makes: time, status, method, path, duration, credential, request id (--format json: the whole entry, bodies redacted). The filters are the server's. A failed poll is retried, never fatal. Exit 0 on Ctrl-C, 2 usage, 3 the key refused. ${CONNECTION}`,
    options: ['status', 'method', 'path'],
    run: async (values) => (await import('./logs-tail.js')).logsTail(values),
  },
};

const COMMON: readonly DevOption[] = ['api-base', 'api-key', 'format', 'help'];

/** The developer command `argv` names (its first one or two words), with the words after its name. */
export function devCommandOf(argv: readonly string[]): { name: string; rest: string[] } | null {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    if (Object.hasOwn(DEV_COMMANDS, name)) return { name, rest: argv.slice(words) };
  }
  return null;
}

/** Parses a developer command's arguments; a flag it does not take is a usage error. */
export function parseDevArgs(command: DevCommand, rest: string[]): { values: DevValues; positionals: string[] } {
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: DEV_OPTIONS });
  const allowed = new Set<string>([...COMMON, ...command.options]);
  const foreign = Object.keys(values).find((flag) => !allowed.has(flag));
  if (foreign) throw new TypeError(`--${foreign} is not an option of ${command.usage.split(' ')[0]}`);
  if (values.format !== undefined && values.format !== 'json' && values.format !== 'text') throw new TypeError('--format must be json or text');
  return { values, positionals };
}
