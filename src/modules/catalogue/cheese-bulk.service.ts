import type { Transaction } from 'kysely';
import { Compile } from 'typebox/compile';
import type { DB } from '../../db/schema.js';
import { AppError, ConflictError, ValidationFailedError, type FieldError } from '../../kernel/errors.js';
import { CheeseInput, CheesePatch } from './cheese.schema.js';
import { VISIBLE_TEXT_MESSAGE, VISIBLE_TEXT_PATTERN } from '../../kernel/text.js';
import { normalizeAliases } from './cheese.input.js';
import type { ChangeContext } from '../../kernel/change-context.js';
import type { CheeseService } from './cheese.service.js';
import type { CheeseView } from './cheese.schema.js';
import type { CatalogueChanges } from './catalogue.changes.js';

export interface BulkOperation {
  op: 'create' | 'update' | 'delete';
  id?: number | string;
  cheese?: Record<string, unknown>;
}

export interface BulkResult {
  index: number;
  op: BulkOperation['op'];
  status: number;
  cheese?: CheeseView;
  error?: AppError;
}

class NotAppliedError extends AppError {
  readonly status = 424;
  readonly type = 'failed_dependency';
}

const createValidator = Compile(CheeseInput);
const patchValidator = Compile(CheesePatch);

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: object;
  message: string;
}

/** One field error per offending property, named like the single-item routes name them. */
function fieldErrorsOf(error: SchemaError, prefix: string): FieldError[] {
  const at = `${prefix}${error.instancePath.replaceAll('/', '.')}`;
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  if (error.keyword === 'required') return (params.requiredProperties ?? []).map((p) => ({ field: `${at}.${p}`, message: 'is required' }));
  if (error.keyword === 'additionalProperties') return (params.additionalProperties ?? []).map((p) => ({ field: `${at}.${p}`, message: 'is not a known field' }));
  // `additionalProperties: false` also reports each extra property as "schema is false": covered above.
  if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) return [];
  const pattern = (error.params as { pattern?: string }).pattern;
  return [{ field: at, message: error.keyword === 'pattern' && pattern === VISIBLE_TEXT_PATTERN ? VISIBLE_TEXT_MESSAGE : error.message }];
}

/** Validates one operation's payload with the same schemas as the single-item routes. */
function validated<T>(validator: { Check(v: unknown): boolean; Errors(v: unknown): Iterable<SchemaError> }, payload: unknown, index: number): T {
  normalizeAliases(payload);
  if (validator.Check(payload)) return payload as T;
  const unique = new Map<string, FieldError>();
  for (const e of [...validator.Errors(payload)].flatMap((e) => fieldErrorsOf(e, `operations.${index}.cheese`))) unique.set(`${e.field}:${e.message}`, e);
  const errors = [...unique.values()].slice(0, 20);
  throw new ValidationFailedError(`Operation ${index} is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, errors);
}

/** Field errors raised about the payload itself (aliases, cross-field rules) are named under `operations.N.cheese`. */
async function inOperation<T>(index: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ValidationFailedError) || !error.errors || error.errors.every((e) => e.field.startsWith('operations.'))) throw error;
    const errors = error.errors.map((e) => (e.field.startsWith('operations.') ? e : { ...e, field: `operations.${index}.cheese.${e.field}` }));
    throw new ValidationFailedError(`Operation ${index} is invalid: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`, errors);
  }
}

function required<T>(value: T | undefined, index: number, field: string): T {
  if (value === undefined) throw ValidationFailedError.field(`operations.${index}.${field}`, 'is required for this operation');
  return value;
}

export class CheeseBulkService {
  constructor(
    private readonly cheeses: CheeseService,
    private readonly changes: CatalogueChanges,
  ) {}

  async run(operations: BulkOperation[], atomic: boolean, ctx: ChangeContext): Promise<{ atomic: boolean; results: BulkResult[] }> {
    return { atomic, results: atomic ? await this.#atomic(operations, ctx) : await this.#independent(operations, ctx) };
  }

  async #independent(operations: BulkOperation[], ctx: ChangeContext): Promise<BulkResult[]> {
    const results: BulkResult[] = [];
    for (const [index, operation] of operations.entries()) {
      try {
        const { result, files } = await this.changes.transaction((trx) => this.#apply(trx, operation, index, ctx));
        await this.cheeses.removeFiles(files);
        results.push(result);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        results.push({ index, op: operation.op, status: error.status, error });
      }
    }
    return results;
  }

  async #atomic(operations: BulkOperation[], ctx: ChangeContext): Promise<BulkResult[]> {
    let failure: { index: number; error: AppError } | undefined;
    try {
      const applied = await this.changes.transaction(async (trx) => {
        const done: { result: BulkResult; files: string[] }[] = [];
        for (const [index, operation] of operations.entries()) {
          try {
            done.push(await this.#apply(trx, operation, index, ctx));
          } catch (error) {
            if (error instanceof AppError) failure = { index, error };
            throw error;
          }
        }
        return done;
      });
      await this.cheeses.removeFiles(applied.flatMap((a) => a.files));
      return applied.map((a) => a.result);
    } catch (error) {
      if (!failure) throw error;
      const failed = failure;
      return operations.map((operation, index) =>
        index === failed.index
          ? { index, op: operation.op, status: failed.error.status, error: failed.error }
          : { index, op: operation.op, status: 424, error: new NotAppliedError(`Not applied: operation ${failed.index} failed and the batch is atomic.`) },
      );
    }
  }

  #apply(trx: Transaction<DB>, operation: BulkOperation, index: number, ctx: ChangeContext): Promise<{ result: BulkResult; files: string[] }> {
    return inOperation(index, () => this.#applyOne(trx, operation, index, ctx));
  }

  async #applyOne(trx: Transaction<DB>, operation: BulkOperation, index: number, ctx: ChangeContext): Promise<{ result: BulkResult; files: string[] }> {
    switch (operation.op) {
      case 'create': {
        const input = validated<Parameters<CheeseService['createIn']>[1]>(createValidator, required(operation.cheese, index, 'cheese'), index);
        if (operation.id !== undefined) throw ValidationFailedError.field(`operations.${index}.id`, 'must not be given for create');
        return { result: { index, op: 'create', status: 201, cheese: await this.cheeses.createIn(trx, input, ctx) }, files: [] };
      }
      case 'update': {
        const id = required(operation.id, index, 'id');
        const input = validated<Parameters<CheeseService['patchIn']>[2]>(patchValidator, required(operation.cheese, index, 'cheese'), index);
        return { result: { index, op: 'update', status: 200, cheese: await this.cheeses.patchIn(trx, id, input, ctx) }, files: [] };
      }
      case 'delete': {
        const id = required(operation.id, index, 'id');
        if (operation.cheese !== undefined) throw ValidationFailedError.field(`operations.${index}.cheese`, 'must not be given for delete');
        return { result: { index, op: 'delete', status: 204 }, files: await this.cheeses.deleteIn(trx, id, ctx) };
      }
      default:
        throw new ConflictError('unknown operation');
    }
  }
}
