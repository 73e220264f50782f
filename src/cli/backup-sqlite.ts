import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Refusal } from './cli.errors.js';

/** The database file in DATA_DIR, as src/db/database.ts opens it. */
export const sqliteFileOf = (dataDir: string) => path.join(dataDir, 'fromagerie.sqlite');

/** The largest page count better-sqlite3 accepts for one step: the rest of the copy in one go. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the live database into `target` (created beforehand, 0600) with SQLite's online backup
 * API. Only the first step is the default 100 pages; the progress callback then asks for every
 * remaining page in one step, which copies under a single read transaction. With small steps a
 * write by the running server between two steps restarts the copy, so under a steady stream of
 * orders it could restart forever; in one step WAL lets the server keep writing while the copy
 * reads the snapshot taken when the step began.
 */
export async function backupSqlite(dataDir: string, target: string): Promise<void> {
  const source = sqliteFileOf(dataDir);
  if (!fs.existsSync(source)) throw new Refusal(`no database to back up: ${source} does not exist (is DATA_DIR right?)`);
  const connection = new SQLite(source, { fileMustExist: true });
  try {
    connection.pragma('busy_timeout = 5000');
    await connection.backup(target, { progress: () => ALL_PAGES });
  } finally {
    connection.close();
  }
  // The copy carries the live database's WAL mode in its header: in rollback mode it is one
  // self-contained file, and opening it (restore reads it first) leaves no -wal/-shm beside it.
  const copy = new SQLite(target, { fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    // Read back once: a copy that would not open on restore is found now, not on the day it is needed.
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Refusal(`the copy failed SQLite's quick_check (${String(check)}); it was removed`);
  } finally {
    copy.close();
  }
}

/** Tables in an SQLite file, read without changing it (read-only: no checkpoint, no journal). */
function tablesIn(file: string): string[] {
  const connection = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return (connection.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((row) => row.name);
  } finally {
    connection.close();
  }
}

/**
 * Puts the backup in place as DATA_DIR's database file: only where there is no database yet or
 * one without a single table (what a first open leaves). Checked before anything is written, so
 * a refusal changes nothing. The copy goes to a temporary file (0600) beside the target and is
 * renamed over it, so an interrupted restore never leaves half a database under the real name.
 */
export function restoreSqlite(backup: string, dataDir: string): void {
  let backupTables: string[];
  try {
    backupTables = tablesIn(backup);
  } catch (error) {
    throw new Refusal(`${backup} is not an SQLite backup of Fromagerie (${(error as Error).message}); nothing changed`);
  }
  if (!backupTables.includes('kysely_migration')) throw new Refusal(`${backup} is not a Fromagerie database (no migrations table); nothing changed`);
  const target = sqliteFileOf(dataDir);
  // Opened whatever its size: a database in WAL mode can hold its tables in the -wal file alone.
  if (fs.existsSync(target) || fs.existsSync(`${target}-wal`)) {
    let tables: string[];
    try {
      tables = tablesIn(target);
    } catch (error) {
      throw new Refusal(`refused: ${target} could not be read to check that it is empty (${(error as Error).message}); restore only into an empty store (a new DATA_DIR). Nothing changed`);
    }
    if (tables.length > 0) throw new Refusal(`refused: ${target} already holds a database (${tables.length} tables); restore only into an empty store (a new DATA_DIR). Nothing changed`);
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const temporary = path.join(dataDir, `.fromagerie.sqlite.restore-${process.pid}`);
  const descriptor = fs.openSync(temporary, 'wx', 0o600);
  try {
    const input = fs.openSync(backup, 'r');
    try {
      const buffer = Buffer.allocUnsafe(1 << 20);
      for (let read; (read = fs.readSync(input, buffer, 0, buffer.length, null)) > 0; ) fs.writeSync(descriptor, buffer, 0, read);
    } finally {
      fs.closeSync(input);
    }
    fs.fsyncSync(descriptor);
  } catch (error) {
    fs.closeSync(descriptor);
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  fs.closeSync(descriptor);
  // The empty database's journals belong to the file being replaced.
  for (const stale of [`${target}-wal`, `${target}-shm`, `${target}-journal`]) fs.rmSync(stale, { force: true });
  fs.renameSync(temporary, target);
  const directory = fs.openSync(dataDir, 'r');
  fs.fsyncSync(directory);
  fs.closeSync(directory);
}
