import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import type { Tracing } from '../kernel/tracing.js';

type Compile = Parameters<NonNullable<Driver['savepoint']>>[2];

/**
 * A CLIENT span per statement (docs/operations.md, "Traces"), at the one seam every query
 * passes: the connection's executeQuery. The span says the operation and the table, read from
 * the SQL text; never the parameters (personal data, secrets). Tracing off: the dialect as given.
 */
export function tracedDialect(dialect: Dialect, tracer: Tracing | undefined, system: 'sqlite' | 'postgresql'): Dialect {
  if (!tracer?.enabled) return dialect;
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new TracedDriver(dialect.createDriver(), tracer, system),
  };
}

/** `SELECT cheeses`, `INSERT request_logs`: the statement's first word and its first table. */
export function querySummary(sqlText: string): { operation: string; summary: string } {
  const operation = (/^\s*\(?\s*([a-z]+)/i.exec(sqlText)?.[1] ?? 'query').toUpperCase();
  const table = /\b(?:from|into|update|join)\s+"?([a-z_][a-z0-9_]*)"?(?:\."?([a-z_][a-z0-9_]*)"?)?/i.exec(sqlText);
  const target = table ? (table[2] ?? table[1]) : undefined;
  return { operation, summary: target ? `${operation} ${target}` : operation };
}

class TracedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly tracer: Tracing,
    private readonly system: string,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { operation, summary } = querySummary(query.sql);
    return this.tracer.inSpan(summary, { 'db.system.name': this.system, 'db.operation.name': operation, 'db.query.summary': summary }, () => this.inner.executeQuery<R>(query), 'client');
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection) => (connection as TracedConnection).inner;

class TracedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly tracer: Tracing,
    private readonly system: string,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TracedConnection(await this.inner.acquireConnection(), this.tracer, this.system);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await this.inner.savepoint!(innerOf(connection), name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await this.inner.rollbackToSavepoint!(innerOf(connection), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    await this.inner.releaseSavepoint!(innerOf(connection), name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
