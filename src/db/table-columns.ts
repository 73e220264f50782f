import type { SelectType } from 'kysely';

export type Nullability = 'nullable' | 'not null';

/** Every column of the table type T, with its nullability as T says it. */
export type ColumnsOf<T> = { readonly [Column in keyof T & string]-?: null extends SelectType<T[Column]> ? 'nullable' : 'not null' };

/**
 * A table type's columns as a value, for what types cannot do at run time: comparing them with
 * the migrated database (test/platform/schema-drift.test.ts) and deriving column lists. Written as a
 * literal, the compiler refuses a missing column, an extra one and a wrong nullability, so the
 * value cannot drift from the type. Curried so T is always named, never inferred.
 */
export function tableColumns<T>() {
  return (columns: ColumnsOf<T>): ColumnsOf<T> => columns;
}

/** The columns of a table but `excluded`, in the descriptor's order. */
export function columnsExcept<Columns extends object, Excluded extends keyof Columns & string>(
  columns: Columns,
  excluded: readonly Excluded[],
): Exclude<keyof Columns & string, Excluded>[] {
  return Object.keys(columns).filter((column) => !(excluded as readonly string[]).includes(column)) as Exclude<keyof Columns & string, Excluded>[];
}
