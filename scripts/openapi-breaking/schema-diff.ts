/**
 * Compares two JSON Schemas (OpenAPI 3.1 Schema Objects) in one direction:
 * - `request`: what a client sends. Breaking when the new schema accepts less.
 * - `response`: what a client receives. Breaking when the new schema may yield what the old
 *   one never promised, or no longer yields what it promised.
 * The rules and what they do not see: docs/openapi/breaking-changes.md.
 */

export type Json = Record<string, unknown>;
export type Direction = 'request' | 'response';

export interface Change {
  /** A short rule name, stable for tests and for reading CI output. */
  rule: string;
  where: string;
  message: string;
  breaking: boolean;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Follows `#/…` references inside one document; a schema without `$ref` is returned as it is. */
export function resolve(document: Json, node: unknown, depth = 0): Json {
  if (!isObject(node)) return {};
  const ref = node.$ref;
  if (typeof ref !== 'string') return node;
  if (depth > 32 || !ref.startsWith('#/')) return {};
  let target: unknown = document;
  for (const token of ref.slice(2).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    target = isObject(target) ? target[key] : undefined;
  }
  return resolve(document, target, depth + 1);
}

/** allOf members merged into one schema, in order (a later member's keywords and properties win), `required` united. */
function flatten(document: Json, schema: Json): Json {
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...own } = schema;
  const parts = [...(allOf as unknown[]).map((member) => flatten(document, resolve(document, member))), own];
  const merged: Json = {};
  for (const part of parts) {
    const properties = { ...(merged.properties as Json), ...(part.properties as Json) };
    const required = [...new Set([...((merged.required as string[]) ?? []), ...((part.required as string[]) ?? [])])];
    Object.assign(merged, part, { properties, required });
  }
  return merged;
}

/** The alternatives a schema stands for: its anyOf/oneOf members, or each type of a type list. */
function branches(document: Json, schema: Json): Json[] {
  const union = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(union)) return union.flatMap((member) => branches(document, flatten(document, resolve(document, member))));
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((type) => ({ ...schema, type }));
  return [schema];
}

function typeOf(schema: Json): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  const values = enumOf(schema);
  if (values && values.length > 0) {
    const kinds = new Set(values.map((v) => (v === null ? 'null' : typeof v)));
    if (kinds.size === 1) return [...kinds][0];
  }
  return undefined;
}

function enumOf(schema: Json): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if ('const' in schema) return [schema.const];
  return undefined;
}

/** What tells one union member from another: its discriminating property's value, else its type. */
function branchKey(schema: Json): string {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  for (const name of ['type', 'kind', 'object']) {
    const values = properties[name] ? enumOf(properties[name]) : undefined;
    if (values?.length === 1) return `${name}=${JSON.stringify(values[0])}`;
  }
  const type = typeOf(schema);
  return type === 'number' ? 'integer|number' : type === 'integer' ? 'integer|number' : (type ?? 'any');
}

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;

export class SchemaDiff {
  readonly changes: Change[] = [];
  /** The pairs of schemas reached through a reference, per direction: compared once. */
  readonly #seen = { request: new WeakMap<Json, WeakSet<Json>>(), response: new WeakMap<Json, WeakSet<Json>>() };

  constructor(
    readonly before: Json,
    readonly after: Json,
  ) {}

  add(rule: string, where: string, message: string, breaking = true): void {
    this.changes.push({ rule, where, message, breaking });
  }

  compare(beforeNode: unknown, afterNode: unknown, where: string, direction: Direction): void {
    const resolvedBefore = resolve(this.before, beforeNode);
    const resolvedAfter = resolve(this.after, afterNode);
    // References make schemas recursive: a pair of schemas reached through one is compared once per direction.
    if (isObject(beforeNode) && isObject(afterNode) && (typeof beforeNode.$ref === 'string' || typeof afterNode.$ref === 'string')) {
      const seen = this.#seen[direction];
      const partners = seen.get(resolvedBefore) ?? new WeakSet<Json>();
      if (partners.has(resolvedAfter)) return;
      partners.add(resolvedAfter);
      seen.set(resolvedBefore, partners);
    }
    const before = flatten(this.before, resolvedBefore);
    const after = flatten(this.after, resolvedAfter);
    const olds = branches(this.before, before);
    const news = branches(this.after, after);
    if (olds.length === 1 && news.length === 1) return this.#single(olds[0]!, news[0]!, where, direction);
    const newByKey = new Map(news.map((b) => [branchKey(b), b]));
    const oldByKey = new Map(olds.map((b) => [branchKey(b), b]));
    if (direction === 'request') {
      for (const [key, old] of oldByKey) {
        const match = newByKey.get(key);
        if (match) this.#single(old, match, where, direction);
        else if (!newByKey.has('any')) this.add('request-union-narrowed', where, `no longer accepts ${key}`);
      }
    } else {
      for (const [key, fresh] of newByKey) {
        const match = oldByKey.get(key);
        if (match) this.#single(match, fresh, where, direction);
        else if (key.includes('=')) this.add('response-variant-added', where, `may now be ${key} (a new variant: clients should ignore kinds they do not know)`, false);
        else if (!oldByKey.has('any')) this.add('response-type-widened', where, `may now be ${key}`);
      }
      for (const key of oldByKey.keys()) if (!newByKey.has(key) && key.includes('=')) this.add('response-variant-removed', where, `is no longer ${key}`, false);
    }
  }

  #single(before: Json, after: Json, where: string, direction: Direction): void {
    const oldType = typeOf(before);
    const newType = typeOf(after);
    if (oldType !== undefined && newType !== undefined && oldType !== newType) {
      const widened = oldType === 'integer' && newType === 'number';
      const narrowed = oldType === 'number' && newType === 'integer';
      if (direction === 'request' ? !widened : !narrowed) return this.add(`${direction}-type-changed`, where, `type ${oldType} became ${newType}`);
    }
    if (direction === 'request' && oldType === undefined && newType !== undefined && Object.keys(before).length > 0) this.add('request-type-added', where, `now must be ${newType}`);
    if (direction === 'response' && oldType !== undefined && newType === undefined) this.add('response-type-removed', where, `is no longer always ${oldType}`);
    this.#enums(before, after, where, direction);
    if (direction === 'request') this.#constraints(before, after, where);
    if (before.properties || after.properties) this.#properties(before, after, where, direction);
    if (isObject(before.items) && isObject(after.items)) this.compare(before.items, after.items, `${where}[]`, direction);
  }

  #enums(before: Json, after: Json, where: string, direction: Direction): void {
    const olds = enumOf(before);
    const news = enumOf(after);
    const show = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');
    if (direction === 'request') {
      if (news && !olds) return this.add('request-enum-added', where, `now takes only ${show(news)}`);
      const removed = olds && news ? olds.filter((v) => !news.some((n) => n === v)) : [];
      if (removed.length > 0) this.add('request-enum-narrowed', where, `no longer takes ${show(removed)}`);
      return;
    }
    if (olds && !news) return this.add('response-enum-removed', where, `is no longer one of a fixed list (was ${show(olds)})`, false);
    const added = olds && news ? news.filter((v) => !olds.some((o) => o === v)) : [];
    if (added.length > 0) this.add('response-enum-value-added', where, `may now be ${show(added)} (clients should accept values they do not know)`, false);
  }

  #constraints(before: Json, after: Json, where: string): void {
    for (const bound of LOWER_BOUNDS) {
      const old = before[bound] as number | undefined;
      const fresh = after[bound] as number | undefined;
      if (fresh !== undefined && (old === undefined || fresh > old)) this.add('request-bound-tightened', where, `${bound} ${old ?? 'none'} → ${fresh}`);
    }
    for (const bound of UPPER_BOUNDS) {
      const old = before[bound] as number | undefined;
      const fresh = after[bound] as number | undefined;
      if (fresh !== undefined && (old === undefined || fresh < old)) this.add('request-bound-tightened', where, `${bound} ${old ?? 'none'} → ${fresh}`);
    }
    for (const keyword of ['pattern', 'format'] as const) {
      if (after[keyword] !== undefined && after[keyword] !== before[keyword]) this.add(`request-${keyword}-changed`, where, `${keyword} ${JSON.stringify(before[keyword] ?? null)} → ${JSON.stringify(after[keyword])}`);
    }
  }

  #properties(before: Json, after: Json, where: string, direction: Direction): void {
    const oldProps = (before.properties ?? {}) as Json;
    const newProps = (after.properties ?? {}) as Json;
    const oldRequired = new Set((before.required as string[]) ?? []);
    const newRequired = new Set((after.required as string[]) ?? []);
    if (direction === 'request') {
      for (const name of newRequired) if (!oldRequired.has(name)) this.add('request-property-required', `${where}.${name}`, oldProps[name] ? 'is now required' : 'is a new required property');
      const closed = after.additionalProperties === false;
      if (closed && before.additionalProperties !== false) this.add('request-object-closed', where, 'now refuses properties it does not list');
      for (const name of Object.keys(oldProps)) {
        if (!(name in newProps)) this.add('request-property-removed', `${where}.${name}`, closed ? 'is no longer accepted' : 'is no longer listed (ignored now)', closed);
      }
    } else {
      for (const name of Object.keys(oldProps)) {
        if (!(name in newProps)) this.add('response-property-removed', `${where}.${name}`, 'was removed');
        else if (oldRequired.has(name) && !newRequired.has(name)) this.add('response-property-optional', `${where}.${name}`, 'is no longer always present');
      }
    }
    for (const name of Object.keys(oldProps)) if (name in newProps) this.compare(oldProps[name], newProps[name], `${where}.${name}`, direction);
  }
}
