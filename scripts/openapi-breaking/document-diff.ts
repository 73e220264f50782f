import { resolve, SchemaDiff, type Change, type Json } from './schema-diff.js';

export type { Change } from './schema-diff.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `/orders/{id}` and `/orders/{orderId}` are one path to a client. */
const pathKey = (path: string) => path.replace(/\{[^}]*\}/g, '{}');

function operations(document: Json): Map<string, { label: string; operation: Json }> {
  const found = new Map<string, { label: string; operation: Json }>();
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      if (isObject(item[method])) found.set(`${method} ${pathKey(path)}`, { label: `${method.toUpperCase()} ${path}`, operation: item[method] });
    }
  }
  return found;
}

/** Every change between two OpenAPI 3.x documents, each marked breaking or not (docs/openapi/breaking-changes.md). */
export function compareDocuments(before: Json, after: Json): Change[] {
  const diff = new SchemaDiff(before, after);
  const newOperations = operations(after);
  for (const [key, { label, operation: old }] of operations(before)) {
    const fresh = newOperations.get(key)?.operation;
    if (!fresh) {
      diff.add('operation-removed', label, 'the operation was removed');
      continue;
    }
    compareSecurity(diff, label, old.security ?? before.security, fresh.security ?? after.security);
    compareParameters(diff, label, old, fresh);
    compareRequestBody(diff, label, old, fresh);
    compareResponses(diff, label, old, fresh);
  }
  const newWebhooks = (after.webhooks ?? {}) as Record<string, Json>;
  for (const [name, item] of Object.entries((before.webhooks ?? {}) as Record<string, Json>)) {
    const where = `webhook ${name}`;
    if (!newWebhooks[name]) {
      diff.add('webhook-removed', where, 'is no longer sent');
      continue;
    }
    // What we send to a receiver is, to the receiver, a response it reads.
    const oldBody = resolve(before, item.post && (item.post as Json).requestBody).content as Record<string, Json> | undefined;
    const newBody = resolve(after, newWebhooks[name].post && (newWebhooks[name].post as Json).requestBody).content as Record<string, Json> | undefined;
    for (const [type, media] of Object.entries(oldBody ?? {})) {
      if (!newBody?.[type]) diff.add('webhook-media-removed', where, `is no longer sent as ${type}`);
      else diff.compare(media.schema, newBody[type].schema, `${where} body`, 'response');
    }
  }
  return diff.changes;
}

/** Each credential an operation took must still be taken, with no scope it did not need. */
function compareSecurity(diff: SchemaDiff, label: string, before: unknown, after: unknown): void {
  const olds = (Array.isArray(before) ? before : []) as Record<string, string[]>[];
  const news = (Array.isArray(after) ? after : []) as Record<string, string[]>[];
  const anonymous = (alternatives: Record<string, string[]>[]) => alternatives.length === 0 || alternatives.some((a) => Object.keys(a).length === 0);
  if (anonymous(olds)) {
    if (!anonymous(news)) diff.add('security-added', label, 'now needs a credential');
    return;
  }
  for (const old of olds) {
    const schemes = Object.keys(old).sort().join(' + ');
    const kept = news.some((fresh) => Object.keys(fresh).sort().join(' + ') === schemes && Object.entries(fresh).every(([scheme, scopes]) => scopes.every((scope) => (old[scheme] ?? []).includes(scope))));
    if (!kept) diff.add('security-alternative-removed', label, `no longer accepts ${schemes}${Object.values(old).flat().length ? ` with ${Object.values(old).flat().join(', ')}` : ''}`);
  }
}

function parametersOf(document: Json, operation: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const entry of (operation.parameters ?? []) as unknown[]) {
    const parameter = resolve(document, entry);
    const name = String(parameter.name);
    found.set(`${String(parameter.in)} ${parameter.in === 'header' ? name.toLowerCase() : name}`, parameter);
  }
  return found;
}

function compareParameters(diff: SchemaDiff, label: string, old: Json, fresh: Json): void {
  const olds = parametersOf(diff.before, old);
  const news = parametersOf(diff.after, fresh);
  for (const [key, parameter] of news) {
    const previous = olds.get(key);
    if (parameter.required === true && previous?.required !== true) diff.add('parameter-required', `${label} ${key}`, previous ? 'is now required' : 'is a new required parameter');
    if (previous) diff.compare(previous.schema, parameter.schema, `${label} ${key}`, 'request');
  }
  for (const [key, parameter] of olds) {
    // Unknown query parameters are refused (400); an unknown header is ignored.
    if (!news.has(key) && parameter.in !== 'header') diff.add('parameter-removed', `${label} ${key}`, 'was removed (sending it is now refused)');
  }
}

function compareRequestBody(diff: SchemaDiff, label: string, old: Json, fresh: Json): void {
  const before = resolve(diff.before, old.requestBody);
  const after = resolve(diff.after, fresh.requestBody);
  if (after.required === true && before.required !== true) diff.add('request-body-required', label, old.requestBody ? 'the body is now required' : 'now takes a required body');
  const oldContent = (before.content ?? {}) as Record<string, Json>;
  const newContent = (after.content ?? {}) as Record<string, Json>;
  if (!fresh.requestBody) return;
  for (const [type, media] of Object.entries(oldContent)) {
    if (!newContent[type]) diff.add('request-media-removed', label, `no longer takes ${type}`);
    else diff.compare(media.schema, newContent[type].schema, `${label} body`, 'request');
  }
}

function compareResponses(diff: SchemaDiff, label: string, old: Json, fresh: Json): void {
  const news = (fresh.responses ?? {}) as Record<string, unknown>;
  for (const [status, entry] of Object.entries((old.responses ?? {}) as Record<string, unknown>)) {
    const where = `${label} ${status}`;
    if (!news[status]) {
      // Another success status breaks a client that checks it; a failure no longer documented does not.
      if (/^2/.test(status)) diff.add('response-status-removed', where, 'the success answer was removed');
      continue;
    }
    const before = resolve(diff.before, entry);
    const after = resolve(diff.after, news[status]);
    const success = /^2/.test(status);
    const oldHeaders = (before.headers ?? {}) as Record<string, unknown>;
    const newHeaders = Object.fromEntries(Object.entries((after.headers ?? {}) as Record<string, unknown>).map(([name, header]) => [name.toLowerCase(), resolve(diff.after, header)]));
    for (const [name, header] of Object.entries(oldHeaders)) {
      const now = newHeaders[name.toLowerCase()];
      if (!now) diff.add('response-header-removed', `${where} ${name}`, 'is no longer sent');
      else if (resolve(diff.before, header).required === true && now.required !== true) diff.add('response-header-optional', `${where} ${name}`, 'is no longer always sent');
    }
    const oldContent = (before.content ?? {}) as Record<string, Json>;
    const newContent = (after.content ?? {}) as Record<string, Json>;
    for (const [type, media] of Object.entries(oldContent)) {
      if (newContent[type]) diff.compare(media.schema, newContent[type].schema, `${where} body`, 'response');
      else if (success) diff.add('response-media-removed', where, `is no longer offered as ${type}`);
    }
  }
}

/** The major part of a semantic version (`2.4.0` → 2). */
export function majorOf(version: unknown): number {
  const match = /^v?(\d+)\./.exec(String(version));
  if (!match) throw new Error(`not a semantic version: ${String(version)}`);
  return Number(match[1]);
}

export interface Verdict {
  changes: Change[];
  breaking: Change[];
  /** Breaking changes are allowed when the major version moved. */
  majorMoved: boolean;
  ok: boolean;
}

export function judge(released: Json, current: Json): Verdict {
  const changes = compareDocuments(released, current);
  const breaking = changes.filter((c) => c.breaking);
  const majorMoved = majorOf((current.info as Json | undefined)?.version) > majorOf((released.info as Json | undefined)?.version);
  return { changes, breaking, majorMoved, ok: breaking.length === 0 || majorMoved };
}
