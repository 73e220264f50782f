import Type from 'typebox';
import { ErrorSchema } from '../../http/common.schema.js';
import type { BulkResult } from './cheese-bulk.service.js';

export const MAX_BULK_OPERATIONS = 100;

const Operation = Type.Object(
  {
    op: Type.Enum(['create', 'update', 'delete']),
    id: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^[A-Za-z0-9-]{1,120}$' })], { description: 'For update and delete: id or slug.' })),
    cheese: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'For create: a CheeseInput. For update: the fields to change.' })),
  },
  { additionalProperties: false },
);

export const BulkBody = Type.Object(
  {
    atomic: Type.Optional(Type.Boolean({ default: false, description: 'All operations or none.' })),
    operations: Type.Array(Operation, { minItems: 1, maxItems: MAX_BULK_OPERATIONS }),
  },
  {
    additionalProperties: false,
    // Runs as shown from the docs page: a `delete` would also need X-Confirm-Delete and remove a seeded cheese.
    examples: [
      {
        atomic: true,
        operations: [
          { op: 'create', cheese: { name: 'Valençay', milk: 'goat', origin: 'France', pricePerKg: 48 } },
          { op: 'update', id: 'comte-24-mois', cheese: { stock_quantity_kg: 40 } },
        ],
      },
    ],
  },
);

const Result = Type.Object({
  index: Type.Integer(),
  op: Type.Enum(['create', 'update', 'delete']),
  status: Type.Integer({ description: 'What the single operation would have answered: 201, 200, 204, 4xx; 424 = not applied.' }),
  cheese: Type.Optional(Type.Unsafe({ $ref: 'Cheese#' })),
  error: Type.Optional(Type.Object(ErrorSchema.properties)),
});

export const BulkResponse = Type.Object({
  atomic: Type.Boolean(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(Result),
});

export function presentBulkResults(outcome: { atomic: boolean; results: BulkResult[] }) {
  const results = outcome.results.map((r) => ({
    index: r.index,
    op: r.op,
    status: r.error ? r.error.status : r.status,
    ...(r.cheese && { cheese: r.cheese }),
    ...(r.error && { error: { code: r.error.status, type: r.error.type, message: r.error.message, ...(r.error.errors && { errors: r.error.errors }) } }),
  }));
  const succeeded = results.filter((r) => r.status < 300).length;
  return { atomic: outcome.atomic, succeeded, failed: results.length - succeeded, results };
}
