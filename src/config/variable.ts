import { Type, type TSchema } from 'typebox';

export class ConfigError extends Error {}

/** Another variable's value, for a default or a rule that depends on it. */
export type Get = <T>(variable: Variable<T>) => T;

/**
 * One environment variable, all of it in one place: the text it accepts (`schema`), what it
 * becomes (`parse`), its default, and its row of the README table. Where it lands in AppConfig
 * is where it sits in SETTINGS (variables.ts): AppConfig's type is read from there.
 */
export interface Variable<T> {
  readonly name: string;
  readonly schema: TSchema;
  /** The README's Default column. */
  readonly defaultText: string;
  /** The README's Meaning column. */
  readonly doc: string;
  parse(raw: string): T;
  fallback(get: Get): T;
  /** Why it must be set, when the others make it required (production). */
  required?(get: Get): string | undefined;
  /** Why its value is refused, given the others. */
  check?(value: T, get: Get): string | undefined;
}

interface Declaration<T> {
  schema: TSchema;
  parse: (raw: string) => T;
  /**
   * Text, parsed as if the variable held it, so the README shows what one would write; or
   * computed, and then `defaultText` says how.
   */
  default: string | ((get: Get) => T);
  defaultText?: string;
  doc: string;
  required?: (get: Get) => string | undefined;
  check?: (value: T, get: Get) => string | undefined;
}

export function variable<T>(name: string, declaration: Declaration<T>): Variable<T> {
  const { schema, parse, default: fallback, defaultText, doc, required, check } = declaration;
  if (typeof fallback !== 'string' && defaultText === undefined) throw new Error(`${name}: a computed default needs its defaultText`);
  return {
    name,
    schema,
    doc,
    defaultText: defaultText ?? `\`${fallback as string}\``,
    parse,
    fallback: typeof fallback === 'string' ? () => parse(fallback) : fallback,
    required,
    check,
  };
}

/** Text matching `pattern`, read as a number. */
export const numeric = (pattern: string) => ({ schema: Type.String({ pattern }), parse: Number });
/** Text as given: non-empty, or as `schema` says. */
export const text = (schema: TSchema = Type.String({ minLength: 1 })) => ({ schema, parse: (raw: string) => raw });
/** No default: AppConfig holds undefined. */
export const unset = () => undefined;

/** AppConfig's shape, each leaf a variable. */
export interface Settings {
  readonly [key: string]: Variable<unknown> | Settings;
}

/**
 * A variable a configuration made by hand (the tests') may leave out, its reader then falling
 * back as its module says; loadConfig always sets it.
 */
export type OptionalVariable<T> = Variable<T> & { readonly optional: true };

export function optional<T>(declared: Variable<T>): OptionalVariable<T> {
  return { ...declared, optional: true };
}

type ValueOf<N> = N extends Variable<infer T> ? T : ConfigOf<N>;
type OptionalKeys<S> = { [K in keyof S]: S[K] extends { readonly optional: true } ? K : never }[keyof S];
type Flat<T> = { [K in keyof T]: T[K] };

export type ConfigOf<S> = Flat<{ -readonly [K in Exclude<keyof S, OptionalKeys<S>>]: ValueOf<S[K]> } & { -readonly [K in OptionalKeys<S>]?: ValueOf<S[K]> }>;

const isVariable = (node: Variable<unknown> | Settings): node is Variable<unknown> => typeof node.parse === 'function';

/** Every variable, in the order of SETTINGS (the README's). */
export function variablesOf(settings: Settings): Variable<unknown>[] {
  return Object.values(settings).flatMap((node) => (isVariable(node) ? [node] : variablesOf(node)));
}

/** The environment's schema: every variable optional, each with its own rule. */
export function environmentSchema(settings: Settings) {
  return Type.Object(Object.fromEntries(variablesOf(settings).map((v) => [v.name, Type.Optional(v.schema)])));
}

/**
 * The configuration from `given` (the variables set, already checked against the schema).
 * Every refusal comes before any default is made, so a refused configuration writes nothing
 * (the app secret's default is a file).
 */
export function settle<S extends Settings>(settings: S, given: Record<string, string>): ConfigOf<S> {
  const { get, reasons } = judge(settings, given);
  if (reasons.length > 0) refuse(reasons.join('; '));
  const build = (node: Settings): unknown => Object.fromEntries(Object.entries(node).map(([key, child]) => [key, isVariable(child) ? get(child) : build(child)]));
  return build(settings) as ConfigOf<S>;
}

/**
 * Why `given` would be refused, without making a default no rule needs: a start that is
 * refused anyway writes nothing (the app secret outside production is a file).
 */
export function reasonsToRefuse(settings: Settings, given: Record<string, string>): string[] {
  return judge(settings, given).reasons;
}

function judge(settings: Settings, given: Record<string, string>): { get: Get; reasons: string[] } {
  const values = new Map<Variable<unknown>, unknown>();
  const get: Get = <T>(v: Variable<T>): T => {
    if (!values.has(v)) values.set(v, Object.hasOwn(given, v.name) ? v.parse(given[v.name]!) : v.fallback(get));
    return values.get(v) as T;
  };
  // Every missing or refused variable is named at once: an operator fixes them in one go, not one start each.
  const reasons: string[] = [];
  for (const v of variablesOf(settings)) {
    if (Object.hasOwn(given, v.name)) get(v);
    else {
      const missing = v.required?.(get);
      if (missing !== undefined) {
        reasons.push(missing);
        continue;
      }
    }
    // Defaults are made only where a rule needs them, and the rest only once all is accepted: some write a file (the app secret outside production).
    const refused = v.check?.(get(v), get);
    if (refused !== undefined) reasons.push(refused);
  }
  return { get, reasons };
}

export function refuse(reason: string | undefined): void {
  if (reason !== undefined) throw new ConfigError(`invalid configuration: ${reason}`);
}

/** The README's table of variables (scripts/config-docs.ts writes it there). */
export function environmentTable(settings: Settings): string {
  const cell = (value: string) => value.replaceAll('|', '\\|');
  const rows = variablesOf(settings).map((v) => `| \`${v.name}\` | ${cell(v.defaultText)} | ${cell(v.doc)} |`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** A written default (`` `8080` ``), or undefined when it is computed, empty or described. */
export function writtenDefault(v: Variable<unknown>): string | undefined {
  return /^`([^`]*)`$/.exec(v.defaultText)?.[1];
}

/**
 * `.env.example` (scripts/config-docs.ts writes it): every variable with its meaning; set to
 * its default when that is a plain value, commented out when it is computed or empty.
 */
export function environmentExample(settings: Settings): string {
  const plain = (text: string) => text.replace(/\*\*/g, '');
  const blocks = variablesOf(settings).map((v) => {
    const written = writtenDefault(v);
    const value = written !== undefined && written !== '' ? `${v.name}=${written}` : `# ${v.name}=`;
    const fallback = written !== undefined && written !== '' ? '' : `\n# Default: ${plain(v.defaultText)}`;
    return `# ${plain(v.doc)}${fallback}\n${value}`;
  });
  return [
    '# Every environment variable of the Fromagerie API with its default: generated from',
    '# src/config/variables.ts by `npm run config-docs` (edit there). The service reads its',
    '# environment only, never this file by itself: copy it to .env, edit, and start with',
    '# `npm run start:env` (Node\'s --env-file=.env), or export the variables yourself.',
    '# A commented-out variable has a computed or empty default (described above it).',
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}
