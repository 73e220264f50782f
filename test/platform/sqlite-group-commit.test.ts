import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, sql, type Generated } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommitListeners } from '../../src/db/commit-signal.js';
import { GroupCommitSqliteDialect } from '../../src/db/sqlite-driver.js';

/**
 * The SQLite driver commits concurrent transactions together (src/db/sqlite-driver.ts). What
 * a caller must still see: a transaction resolves only once its rows are committed (another
 * connection reads them), a failing one leaves nothing and takes no other with it, reads
 * outside a transaction never see rows not yet committed, commit listeners fire after the
 * COMMIT, and a COMMIT that fails fails every transaction in it.
 */
interface TestDB {
  notes: { id: Generated<number>; body: string; parent_id: number | null };
}

let dir: string;
let file: string;
let db: Kysely<TestDB>;
let other: SQLite.Database;
let commits: CommitListeners;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fromagerie-group-'));
  file = path.join(dir, 'test.sqlite');
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  connection.pragma('foreign_keys = ON');
  connection.exec('create table notes (id integer primary key, body text not null, parent_id integer references notes(id) deferrable initially deferred)');
  commits = new CommitListeners();
  db = new Kysely<TestDB>({ dialect: new GroupCommitSqliteDialect(connection, commits) });
  // Another process's view of the file: it sees committed rows only.
  other = new SQLite(file, { readonly: true });
});

afterEach(async () => {
  other.close();
  await db.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});

const committedBodies = () => (other.prepare('select body from notes order by id').all() as { body: string }[]).map((row) => row.body);

describe('group commit on SQLite', () => {
  it('resolves each transaction only once its rows are committed, and keeps a failing one from the others', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('notes').values({ body: `note ${i}`, parent_id: null }).execute();
          await trx.insertInto('notes').values({ body: `note ${i} again`, parent_id: null }).execute();
          if (i % 3 === 0) throw new Error(`refused ${i}`);
          return committedBodies();
        }).then((seenInside) => ({ seenInside, seenAfter: committedBodies() })),
      ),
    );
    const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 !== 0);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason.message))).toEqual(
      Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 === 0).map((i) => `refused ${i}`),
    );
    for (const i of expected) {
      const outcome = outcomes[i] as PromiseFulfilledResult<{ seenInside: string[]; seenAfter: string[] }>;
      expect(outcome.status).toBe('fulfilled');
      // Not visible to others while running; committed by the time it resolved.
      expect(outcome.value.seenInside).not.toContain(`note ${i}`);
      expect(outcome.value.seenAfter).toEqual(expect.arrayContaining([`note ${i}`, `note ${i} again`]));
    }
    expect(committedBodies()).toEqual(expected.flatMap((i) => [`note ${i}`, `note ${i} again`]));
  });

  it('shares COMMITs between concurrent transactions', async () => {
    const before = (other.prepare('pragma data_version').get() as { data_version: number }).data_version;
    const versions = new Set<number>();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('notes').values({ body: `n${i}`, parent_id: null }).execute();
        }).then(() => versions.add((other.prepare('pragma data_version').get() as { data_version: number }).data_version)),
      ),
    );
    expect(committedBodies()).toHaveLength(40);
    // data_version moves once per COMMIT seen from the other connection: far fewer than 40.
    expect(versions.size).toBeLessThan(10);
    expect(Math.max(...versions)).toBeGreaterThan(before);
  });

  it('never lets a read outside a transaction see rows not yet committed', async () => {
    // The writer's row breaks a deferred foreign key, so its COMMIT will fail: a read that
    // saw the row before that COMMIT would have read something that never existed.
    const writer = db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'never committed', parent_id: 999 }).execute());
    const reader = db.selectFrom('notes').select('body').execute();
    await expect(writer).rejects.toThrow(/FOREIGN KEY/i);
    expect(await reader).toEqual([]);
  });

  it('fires commit listeners after the COMMIT, for inserts with RETURNING too', async () => {
    const seenByListener: string[][] = [];
    commits.add('notes', () => seenByListener.push(committedBodies()));
    await Promise.all([
      db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'a', parent_id: null }).returning('id').execute()),
      db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'b', parent_id: null }).execute()),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seenByListener.length).toBeGreaterThanOrEqual(1);
    expect(seenByListener.at(-1)).toEqual(['a', 'b']);
    const rolledBack: string[] = [];
    commits.add('notes', () => rolledBack.push('fired'));
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('notes').values({ body: 'c', parent_id: null }).execute();
      throw new Error('no');
    }).catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(rolledBack).toEqual([]);
  });

  it('fails every transaction of a group whose COMMIT fails, and commits none of them', async () => {
    // A deferred foreign key is checked at COMMIT: one bad row fails the group's COMMIT.
    const outcomes = await Promise.allSettled([
      db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'fine', parent_id: null }).execute()),
      db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'orphan', parent_id: 999 }).execute()),
      db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'also fine', parent_id: null }).execute()),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason.message)).toMatch(/FOREIGN KEY/i);
    expect(committedBodies()).toEqual([]);
    // The connection is usable afterwards.
    await db.transaction().execute((trx) => trx.insertInto('notes').values({ body: 'after', parent_id: null }).execute());
    expect(committedBodies()).toEqual(['after']);
    expect((await sql<{ n: number }>`select count(*) as n from notes`.execute(db)).rows[0]!.n).toBe(1);
  });
});
