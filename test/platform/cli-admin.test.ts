import { execFileSync, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTestStorage, processEnvFor, type TestStorage } from '../helpers/database.js';

/**
 * The operator CLI's admin and key commands: the real CLI (bin/fromagerie.js) as a child
 * process on the database of a running app, on each dialect. Each command is a process that
 * loads the app's module graph through tsx (1.5-2 s here, several times that on a loaded
 * machine), so each test runs few of them, at once where they are independent; and each test
 * gets 60 s (cli-production-seed.test.ts's figure): the slowest took 9 s with the machine's load
 * at 8 on 2 cores, against the default 30 s.
 */
const CLI_TIMEOUT_MS = 60_000;
let storage: TestStorage;
let t: TestApp;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  storage = await createTestStorage();
  t = await createTestApp({ storage });
  env = processEnvFor(storage);
});
afterAll(async () => {
  await t.close();
  await storage.dispose();
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/fromagerie.js', ...args], { env: options.env ?? env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/**
 * util-linux's `script`, which runs a command on a new pseudo-terminal (macOS's BSD `script`
 * takes other flags): the only way here to give the CLI a stdin that is a TTY, as a person's is.
 */
const HAS_SCRIPT = (() => {
  try {
    return execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux');
  } catch {
    return false;
  }
})();
const shellQuoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * The CLI on a pseudo-terminal, through `script -qfec`: it types each answer (then Enter, a CR
 * as a terminal sends) once its prompt has appeared, as a person would, and resolves with the
 * exit code and everything the terminal showed (the CLI's stdout and stderr, and any echo).
 */
function cliOnTerminal(args: string[], answers: { prompt: string; typed: string }[]): Promise<{ code: number | null; screen: string }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, 'bin/fromagerie.js', ...args].map(shellQuoted).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env });
    let screen = '';
    let answered = 0;
    let from = 0;
    child.stdout.on('data', (d) => {
      screen += d;
      for (let at; answered < answers.length && (at = screen.indexOf(answers[answered]!.prompt, from)) >= 0; answered++) {
        from = at + answers[answered]!.prompt.length;
        child.stdin.write(`${answers[answered]!.typed}\r`);
      }
    });
    child.stderr.on('data', (d) => (screen += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS - 5_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, screen });
    });
  });
}

const login = (username: string, password: string) => t.http.post('/v2/customer/login', { json: { username, password } });

describe('help', () => {
  it('every command prints its help, and `help` the whole usage, without the configuration or the database', async () => {
    // A database nowhere and a data directory that cannot be created: anything touching them would fail.
    const nowhere = { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nowhere', DATA_DIR: '/proc/fromagerie-nowhere', PORT: 'not-a-port' };
    const calls: [string[], RegExp][] = [
      [['help'], /^Fromagerie operator CLI[\s\S]*admin reset-password/],
      [['--help'], /^Fromagerie operator CLI/],
      [['api-keys', 'list', '--help'], /^Usage: npm run cli -- api-keys list --user NAME\n[\s\S]*header row/],
      [['api-keys', 'revoke', '-h'], /^Usage: npm run cli -- api-keys revoke/],
      [['admin', 'reset-password', '--help'], /^Usage: npm run cli -- admin reset-password[\s\S]*--password-stdin/],
      [['db:migrate', '--help'], /^Usage: npm run cli -- db:migrate/],
      [['oauth-clients', 'list', '--help'], /^Usage: npm run cli -- oauth-clients list\n[\s\S]*header row/],
      [['secrets', 're-encrypt', '--help'], /^Usage: npm run cli -- secrets re-encrypt\n[\s\S]*APP_SECRET_PREVIOUS[\s\S]*compare-and-set/],
    ];
    const outcomes = await Promise.all(calls.map(([args]) => cli(args, { env: nowhere })));
    outcomes.forEach((outcome, i) => {
      expect(outcome, calls[i]![0].join(' ')).toMatchObject({ code: 0, stderr: '' });
      expect(outcome.stdout).toMatch(calls[i]![1]);
    });
  }, CLI_TIMEOUT_MS);
});

describe('admin reset-password', () => {
  it('generates a password, printed once; it logs in, the old one no longer does, and the login sessions end', async () => {
    expect((await login('admin', 'test-staff-password')).status).toBe(200);
    const reset = await cli(['admin', 'reset-password']);
    expect(reset).toMatchObject({ code: 0, stderr: '' });
    expect(reset.stdout).toMatch(/^password of "admin" reset: 1 login session\(s\) ended, 0 OAuth grant\(s\) revoked; API keys stay valid\n/);
    const password = reset.stdout.trim().split('\n').at(-1)!;
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);

    expect((await login('admin', password)).status).toBe(200);
    expect((await login('admin', 'test-staff-password')).status).toBe(401);
    const admin = await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    const sessions = await t.database.db.selectFrom('login_sessions').select('revoked_at').where('account_id', '=', admin.id).orderBy('id').execute();
    expect(sessions.map((s) => s.revoked_at !== null)).toEqual([true, false]);
  }, CLI_TIMEOUT_MS);

  it('takes the password from one line of stdin with --password-stdin, printing no password, for --user', async () => {
    const key = await t.key(['read:cheeses'], 'customer');
    const username = (await t.database.db.selectFrom('accounts').select('username').orderBy('id', 'desc').executeTakeFirstOrThrow()).username;
    const reset = await cli(['admin', 'reset-password', '--user', username, '--password-stdin'], { stdin: 'a brand new passphrase\nignored second line\n' });
    expect(reset).toMatchObject({ code: 0, stderr: '' });
    expect(reset.stdout).toBe(`password of "${username}" reset: 0 login session(s) ended, 0 OAuth grant(s) revoked; API keys stay valid\n`);
    expect((await login(username, 'a brand new passphrase')).status).toBe(200);
    expect((await t.http.get('/v2/cheeses?limit=1', { headers: { 'x-api-key': key } })).status).toBe(200);
  }, CLI_TIMEOUT_MS);

  it.skipIf(!HAS_SCRIPT)('on a terminal, --password-stdin asks twice with echo off; a mismatch changes nothing (needs util-linux `script`)', async () => {
    await t.key(['read:cheeses'], 'customer');
    await t.key(['read:cheeses'], 'customer');
    const [mine, other] = (await t.database.db.selectFrom('accounts').select('username').orderBy('id', 'desc').limit(2).execute()).map((a) => a.username);
    const typed = 'typed on a terminal, never shown';
    // Two processes at once: half the wall time where a core is free.
    const [reset, mismatch] = await Promise.all([
      cliOnTerminal(['admin', 'reset-password', '--user', mine!, '--password-stdin'], [
        { prompt: 'New password: ', typed },
        { prompt: 'Repeat it: ', typed },
      ]),
      cliOnTerminal(['admin', 'reset-password', '--user', other!, '--password-stdin'], [
        { prompt: 'New password: ', typed: 'the first of two passwords' },
        { prompt: 'Repeat it: ', typed: 'the second, which differs' },
      ]),
    ]);
    expect(reset.code, reset.screen).toBe(0);
    expect(reset.screen).toBe(`New password: \r\nRepeat it: \r\npassword of "${mine}" reset: 0 login session(s) ended, 0 OAuth grant(s) revoked; API keys stay valid\r\n`);
    expect((await login(mine!, typed)).status).toBe(200);

    expect(mismatch.code, mismatch.screen).toBe(1);
    expect(mismatch.screen).toBe('New password: \r\nRepeat it: \r\nthe two passwords typed differ: nothing was changed\r\n');
    expect((await login(other!, 'not-used-in-tests')).status).toBe(200);
  }, CLI_TIMEOUT_MS);

  it('refuses a password as an argument, a weak one, the current one and an unknown user: exit 1 with a message', async () => {
    await t.key(['read:cheeses'], 'customer');
    const username = (await t.database.db.selectFrom('accounts').select('username').orderBy('id', 'desc').executeTakeFirstOrThrow()).username;
    const [argument, short, repeated, unknown, current] = await Promise.all([
      cli(['admin', 'reset-password', '--password', 'a brand new passphrase']),
      cli(['admin', 'reset-password', '--password-stdin'], { stdin: 'too short\n' }),
      cli(['admin', 'reset-password', '--password-stdin'], { stdin: 'aaaaaaaaaaaaaaaa\n' }),
      cli(['admin', 'reset-password', '--user', 'nobody']),
      // test/helpers/app.ts gives its accounts this password.
      cli(['admin', 'reset-password', '--user', username, '--password-stdin'], { stdin: 'not-used-in-tests\n' }),
    ]);
    expect(argument).toMatchObject({ code: 1, stdout: '' });
    expect(argument.stderr).toMatch(/^--password is refused: a password in the arguments lands in the shell history/);
    expect(short).toMatchObject({ code: 1, stdout: '' });
    expect(short.stderr).toMatch(/^the password must be 12 to 256 characters long \(it has 9\)/);
    expect(repeated).toMatchObject({ code: 1, stdout: '' });
    expect(repeated.stderr).toMatch(/^the password must use at least 4 different characters/);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'No account named "nobody".\n' });
    expect(current).toMatchObject({ code: 1, stdout: '', stderr: "That is already the account's password: nothing was changed.\n" });
    expect((await login(username, 'not-used-in-tests')).status).toBe(200);
  }, CLI_TIMEOUT_MS);
});

describe('api-keys', () => {
  it('revoke of a key already revoked says so, exit 0, and changes nothing', async () => {
    const admin = await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    const created = await t.app.modules.identity.provides.apiKeys.create({ accountId: admin.id, role: 'admin' }, { scopes: ['read:cheeses'] }, null);
    const row = () => t.database.db.selectFrom('api_keys').select(['revoked_at', 'updated_at']).where('id', '=', created.id).executeTakeFirstOrThrow();
    const outboxSize = async () => (await t.database.db.selectFrom('outbox').select('id').execute()).length;

    const first = await cli(['api-keys', 'revoke', '--user', 'admin', '--id', String(created.id)]);
    expect(first).toMatchObject({ code: 0, stdout: `revoked key ${created.id}\n`, stderr: '' });
    const revoked = await row();
    expect(revoked.revoked_at).not.toBeNull();
    const events = await outboxSize();

    const second = await cli(['api-keys', 'revoke', '--user', 'admin', '--id', String(created.id)]);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toMatch(new RegExp(`^key ${created.id} was already revoked \\(at \\d{4}-\\d\\d-\\d\\dT[^)]+\\); nothing changed\\n$`));
    expect(await row()).toEqual(revoked);
    expect(await outboxSize()).toBe(events);
  }, CLI_TIMEOUT_MS);

  it('list prints a header row, then one line per active key', async () => {
    const admin = await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    const created = await t.app.modules.identity.provides.apiKeys.create({ accountId: admin.id, role: 'admin' }, { scopes: ['read:cheeses'], name: 'till' }, null);
    const listed = await cli(['api-keys', 'list', '--user', 'admin']);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toBe('id\tprefix\tscopes\texpires\tname');
    expect(lines.slice(1)).toContain(`${created.id}\t${created.key.slice(0, 16)}…\tread:cheeses\tno expiry\ttill`);
  }, CLI_TIMEOUT_MS);
});

describe('oauth-clients', () => {
  it('list prints a header row, then one line per client, never its secret', async () => {
    const admin = await t.database.db.selectFrom('accounts').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    const client = await t.app.modules.identity.provides.oauthClients.register(
      { name: 'Stock sync', type: 'confidential', redirectUris: [], grants: ['client_credentials'], scopes: ['read:cheeses', 'read:orders'] },
      admin.id,
    );
    const listed = await cli(['oauth-clients', 'list']);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toBe('id\tclient_id\ttype\tgrants\tscopes\tname');
    expect(lines.slice(1)).toContain(`${client.id}\t${client.clientId}\tconfidential\tclient_credentials\tread:cheeses read:orders\tStock sync`);
    expect(listed.stdout).not.toContain(client.clientSecret!);
  }, CLI_TIMEOUT_MS);
});
