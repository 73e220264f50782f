import { PostgresAdapter, sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';

/** Column types that differ between the dialects, chosen once for every migration. */
export function columnTypes(db: Kysely<unknown>) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    postgres,
    timestamp: postgres ? ('timestamptz' as const) : ('text' as const),
    boolean: postgres ? ('boolean' as const) : ('integer' as const),
    bigint: postgres ? ('bigint' as const) : ('integer' as const),
    /** Byte-order comparison on both dialects, so keyset order never depends on a locale. */
    sortText: (col: ColumnDefinitionBuilder) => (postgres ? col.modifyEnd(sql`collate "C"`) : col),
    idColumn: <T extends string, C extends string>(table: CreateTableBuilder<T, C>) =>
      postgres
        ? table.addColumn('id', 'bigint', (col) => col.primaryKey().generatedByDefaultAsIdentity())
        : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement()),
  };
}
