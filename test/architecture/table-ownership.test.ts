import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tableOwners } from '../../scripts/table-owners.js';

/**
 * Data ownership, as strict as import ownership (issue 21): a module's SQL names only its own
 * tables, and reaches another module's data through that module's entry. dependency-cruiser
 * sees imports, not the table names inside Kysely calls and `sql` templates, so this test
 * reads the source. Who owns a table is derived, not written twice (scripts/table-owners.ts).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const MODULES = path.join(ROOT, 'src/modules');

const KYSELY_CALL = /\b(?:selectFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto|innerJoin|leftJoin|rightJoin|fullJoin|innerJoinLateral|leftJoinLateral)\(\s*(['"`])([a-z_][a-z0-9_]*)(?:\s+as\s+[A-Za-z_]\w*)?\1/g;
const TABLE_TYPE = /\bDB\[\s*(['"])([a-z_][a-z0-9_]*)\1\s*\]/g;
const SQL_TEMPLATE = /\bsql(?:<[^>`]*>)?`((?:[^`\\]|\\.)*)`/g;
const SQL_TABLE = /\b(?:from|join|update|into|table)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

/** Every table a source file names in a query: Kysely calls (with or without `as alias`), `DB['t']` types, and table words after from/join/update/into in `sql` templates. */
function tablesNamedIn(source: string): { table: string; line: number }[] {
  const found: { table: string; line: number }[] = [];
  const lineOf = (index: number) => source.slice(0, index).split('\n').length;
  for (const match of source.matchAll(KYSELY_CALL)) found.push({ table: match[2]!, line: lineOf(match.index) });
  for (const match of source.matchAll(TABLE_TYPE)) found.push({ table: match[2]!, line: lineOf(match.index) });
  for (const template of source.matchAll(SQL_TEMPLATE)) {
    // The template's own text only: `${…}` holds values and expressions, not SQL words.
    const text = template[1]!.replace(/\$\{[^}]*\}/g, ' ? ');
    for (const match of text.matchAll(SQL_TABLE)) found.push({ table: match[1]!.toLowerCase(), line: lineOf(template.index) });
  }
  return found;
}

interface Violation {
  file: string;
  line: number;
  table: string;
  owner: string;
}

/** Tables a module's file names that another module owns (CTE names and the like, not tables at all, pass). */
function violationsIn(file: string, module: string, source: string, owners: ReadonlyMap<string, string>): Violation[] {
  return tablesNamedIn(source).flatMap(({ table, line }) => {
    const owner = owners.get(table);
    return owner !== undefined && owner !== module ? [{ file, line, table, owner }] : [];
  });
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * The exceptions, each with why: none today (issue 21 moved the last ones behind the owners'
 * entries). An entry no file needs any more fails the test below, so the list only shrinks:
 * delete the entry when its reason is gone.
 */
const ALLOWED: readonly { file: string; table: string; reason: string }[] = [];

describe('table ownership', () => {
  const owners = tableOwners(fs.readFileSync(path.join(ROOT, 'src/db/schema.ts'), 'utf8'));
  const modules = fs.readdirSync(MODULES, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const violations = modules.flatMap((module) =>
    sourceFiles(path.join(MODULES, module)).flatMap((full) => violationsIn(path.relative(ROOT, full), module, fs.readFileSync(full, 'utf8'), owners)),
  );
  const allowed = (v: Violation) => ALLOWED.some((entry) => entry.file === v.file && entry.table === v.table);

  it('derives every table\'s owner from src/db/schema.ts', () => {
    expect(owners.get('accounts')).toBe('identity');
    expect(owners.get('orders')).toBe('orders');
    expect(owners.get('outbox')).toBe('outbox');
    expect(owners.get('webhook_deliveries')).toBe('webhooks');
    expect(owners.get('deployment')).toBe('src/db');
    expect(owners.size).toBeGreaterThanOrEqual(24);
  });

  it('no module names another module\'s table outside the allowlist', () => {
    expect(violations.filter((v) => !allowed(v)).map((v) => `${v.file}:${v.line} names ${v.table} (owned by ${v.owner})`)).toEqual([]);
  });

  it('every allowlist entry is still needed', () => {
    expect(ALLOWED.filter((entry) => !violations.some((v) => v.file === entry.file && v.table === entry.table)).map((entry) => `${entry.file}: ${entry.table}`)).toEqual([]);
  });

  it('catches every form a table is named in', () => {
    const owned = new Map([['accounts', 'identity'], ['orders', 'orders']]);
    const named = (source: string) => violationsIn('x.ts', 'orders', source, owned).map((v) => v.table);
    expect(named("db.selectFrom('accounts')")).toEqual(['accounts']);
    expect(named("db.selectFrom('orders as o').leftJoin('accounts as a', 'a.id', 'o.account_id')")).toEqual(['accounts']);
    expect(named("eb.selectFrom(\"accounts as a\").select('a.username')")).toEqual(['accounts']);
    for (const call of ['insertInto', 'updateTable', 'deleteFrom', 'innerJoin', 'rightJoin', 'fullJoin']) expect(named(`trx.${call}('accounts')`)).toEqual(['accounts']);
    expect(named('await sql`select id from accounts where id = ${id} for update`.execute(trx)')).toEqual(['accounts']);
    expect(named('sql<number>`update "accounts" set plan = ${plan}`')).toEqual(['accounts']);
    expect(named('sql`select o.id from orders o join accounts a on a.id = o.account_id`')).toEqual(['accounts']);
    expect(named("type Row = DB['accounts'];")).toEqual(['accounts']);
    // Its own tables, CTE names, and words that are not tables pass.
    expect(named("db.with('o', (qb) => qb.insertInto('orders')).selectFrom('o')")).toEqual([]);
    expect(named('sql`select ${value} from orders`; // the accounts are elsewhere')).toEqual([]);
  });
});

/**
 * Over test/ (issue 29 §2): fixtures are made through module services, so a test file writes
 * with SQL only into the tables of the module it tests (test/<module>/), or none. Reads for
 * assertions are fine; so are the helpers of test/helpers/ (named as such) and the migration
 * tests, which write rows as an earlier version left them.
 */
const KYSELY_WRITE = /\b(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*(['"`])([a-z_][a-z0-9_]*)(?:\s+as\s+[A-Za-z_]\w*)?\1/g;
/** Raw SQL writes, in `sql` templates and in strings handed to a client. */
const SQL_WRITE = /\b(?:insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?(?:\s+as\s+\w+)?(?=\s*(?:\(|set\b|values\b|where\b|select\b|default\b|[`'"]|$))/gi;

function tablesWrittenIn(source: string): { table: string; line: number }[] {
  const lineOf = (index: number) => source.slice(0, index).split('\n').length;
  return [...[...source.matchAll(KYSELY_WRITE)].map((m) => ({ table: m[2]!, line: lineOf(m.index) })), ...[...source.matchAll(SQL_WRITE)].map((m) => ({ table: m[1]!.toLowerCase(), line: lineOf(m.index) }))];
}

/** The module a test file tests: its directory under test/, when that is a module's name. */
function moduleTestedBy(file: string, modules: readonly string[]): string | undefined {
  const directory = path.relative(path.join(ROOT, 'test'), file).split(path.sep)[0]!;
  return modules.includes(directory) ? directory : undefined;
}

const TEST_EXEMPT = [/^test\/helpers\//, /^test\/architecture\//, /migration[s]?\.test\.ts$/, /^test\/chaos\/checker\.chaos\.ts$/];

/**
 * Writes into another module's tables that a test needs, each with why; an entry no file needs
 * any more fails, so the list only shrinks.
 */
const TEST_ALLOWED: readonly { file: string; table: string; reason: string }[] = [
  { file: 'test/events/event-log-delivery.test.ts', table: 'outbox', reason: 'an outbox row as a writer still in its transaction leaves it (unsettled), which no service produces on demand' },
  { file: 'test/http/bounded-resources.test.ts', table: 'cheeses', reason: 'a row too large for the service\'s own validation, to prove the HTTP bound' },
  { file: 'test/http/caches.test.ts', table: 'cheeses', reason: 'changed behind the caches\' back (no broadcast): only the cache TTL may reveal it' },
  { file: 'test/http/caches.test.ts', table: 'api_keys', reason: 'changed behind the caches\' back (no broadcast): only the cache TTL may reveal it' },
  { file: 'test/platform/cross-instance-cache.test.ts', table: 'cheeses', reason: 'changed behind every instance\'s back (no NOTIFY): only the flush after a reconnect can show it' },
  { file: 'test/platform/prepared.test.ts', table: 'tags', reason: 'tests src/db/prepared.ts itself, on a real table' },
];

describe('table ownership over test/', () => {
  const owners = tableOwners(fs.readFileSync(path.join(ROOT, 'src/db/schema.ts'), 'utf8'));
  const modules = fs.readdirSync(MODULES, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const files = sourceFiles(path.join(ROOT, 'test')).filter((full) => !TEST_EXEMPT.some((pattern) => pattern.test(path.relative(ROOT, full))));
  const violations = files.flatMap((full) => {
    const file = path.relative(ROOT, full);
    const tested = moduleTestedBy(full, modules);
    return tablesWrittenIn(fs.readFileSync(full, 'utf8')).flatMap(({ table, line }) => {
      const owner = owners.get(table);
      return owner !== undefined && owner !== tested ? [{ file, line, table, owner }] : [];
    });
  });
  const allowed = (v: Violation) => TEST_ALLOWED.some((entry) => entry.file === v.file && entry.table === v.table);

  it('no test file writes with SQL into a table another module owns, outside the allowlist', () => {
    expect(violations.filter((v) => !allowed(v)).map((v) => `${v.file}:${v.line} writes ${v.table} (owned by ${v.owner})`)).toEqual([]);
  });

  it('every allowlist entry is still needed', () => {
    expect(TEST_ALLOWED.filter((entry) => !violations.some((v) => v.file === entry.file && v.table === entry.table)).map((entry) => `${entry.file}: ${entry.table}`)).toEqual([]);
  });

  it('catches Kysely and raw SQL writes, not reads', () => {
    const written = (source: string) => tablesWrittenIn(source).map((w) => w.table);
    expect(written("db.updateTable('cheeses').set({ name })")).toEqual(['cheeses']);
    expect(written("trx.insertInto('outbox').values(row)")).toEqual(['outbox']);
    expect(written("db.deleteFrom('api_keys as k')")).toEqual(['api_keys']);
    expect(written('sql`update cheeses set name = ${name}`')).toEqual(['cheeses']);
    expect(written('client.query(\'delete from "api_keys" where id = $1\')')).toEqual(['api_keys']);
    expect(written("sql`insert into outbox (event_id) values (${id})`")).toEqual(['outbox']);
    expect(written("db.selectFrom('cheeses').where('name', '=', 'update')")).toEqual([]);
    expect(moduleTestedBy(path.join(ROOT, 'test/orders/x.test.ts'), ['orders'])).toBe('orders');
    expect(moduleTestedBy(path.join(ROOT, 'test/platform/x.test.ts'), ['orders'])).toBeUndefined();
  });
});
