import type { ColumnType, Generated } from 'kysely';

/** PostgreSQL hands back Date, SQLite the ISO string we wrote; both accept ISO strings. */
export type Timestamp = ColumnType<Date | string, string, string>;
export type NullableTimestamp = ColumnType<Date | string | null, string | null | undefined, string | null>;
/** PostgreSQL boolean, SQLite 0/1 (bound by sqlite-driver.ts). */
export type Bool = ColumnType<boolean | number, boolean | undefined, boolean>;
export type Id = Generated<number>;

export function toIso(value: Date | string): string {
  return typeof value === 'string' ? new Date(value).toISOString() : value.toISOString();
}

export function toIsoOrNull(value: Date | string | null): string | null {
  return value === null ? null : toIso(value);
}

export function toBool(value: boolean | number): boolean {
  return value === true || value === 1;
}
