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
