import type { OperationDocumenter } from '../../kernel/module.js';

const errorRef = { $ref: 'Error#' };

/** The Idempotency-Key header and its answers, on the operations that honour it (`config.idempotent`). */
export const documentIdempotency: OperationDocumenter = (route, operation) => {
  const idempotent = route.config?.idempotent;
  if (!idempotent) return;
  const headers = (operation.headers as { properties?: Record<string, unknown> } | undefined) ?? {};
  operation.headers = {
    type: 'object',
    ...headers,
    properties: {
      ...headers.properties,
      'Idempotency-Key': {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        description:
          'Makes a retry safe: the same key and request (JSON key order does not matter) within 24 hours replays the first answer (with `Idempotent-Replayed: true`) and creates nothing; the same key with another request is 422; while the first is still running, 409. ' +
          'Keys belong to the account, and a first answer is replayed only to the credential that made the request (another credential of the account: 409, with `Location` when something was created); a replay is authenticated and authorized like a new request.',
      },
    },
  };
  // The header is one shared declaration in the document (src/http/openapi-document.ts): what differs goes in the operation.
  if (idempotent === 'secret') {
    const note = 'Idempotency-Key: the successful answer holds a secret shown once and never stored, so its retry is a 409 whose `Location` names what was created (revoke it, or use it if you kept the secret).';
    operation.description = operation.description ? `${String(operation.description)}\n\n${note}` : note;
  }
  const responses = { ...(operation.response as Record<string, unknown>) };
  responses[409] ??= { ...errorRef, description: 'A request with this Idempotency-Key is still being processed, or was made by another credential.' };
  responses[422] ??= { ...errorRef, description: 'Invalid, or the Idempotency-Key was used with another request.' };
  operation.response = responses;
};
