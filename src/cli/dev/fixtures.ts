import { readdirSync, readFileSync } from 'node:fs';

/** One call of a fixture: an ordinary /v2 request; `${step.path}` in its path or body cites an earlier step's answer. */
export interface FixtureStep {
  /** The name later steps cite its answer by. */
  name?: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Under the API base (`/orders`, not `/v2/orders`). */
  path: string;
  body?: unknown;
  /** `none` (no credential: signing up, signing in), a `${…}` token, or absent: the key. */
  auth?: string;
  /** The answer's `id` is this kind of object (`metadata.object_type`): the events printed are those about the objects the fixture touched. */
  object?: string;
}

/** A data file in src/cli/fixtures (shipped in the build beside the compiled CLI). */
export interface Fixture {
  kind: string;
  description: string;
  /** Set for kinds no API call causes (time or a job): what does, for `--list`. */
  onlyBy?: string;
  steps: FixtureStep[];
}

const DIR = new URL('../fixtures/', import.meta.url);

export function loadFixtures(): Fixture[] {
  return readdirSync(DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(new URL(file, DIR), 'utf8')) as Fixture);
}

/** The value at `a.b[0].c` in the answers so far; undefined when any part is missing. */
function lookup(answers: Record<string, unknown>, reference: string): unknown {
  let value: unknown = answers;
  for (const part of reference.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * `${name.path}` replaced by the value cited (a string that is only a citation takes the
 * value's own type); `${random}` is one token per run, for unique names.
 */
export function interpolate(template: unknown, answers: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    const cite = (reference: string) => {
      const value = lookup(answers, reference);
      if (value === undefined || value === null) throw new Error(`the fixture cites \${${reference}}, which no earlier answer has`);
      return value;
    };
    const whole = /^\$\{([^}]+)\}$/.exec(template);
    if (whole) return cite(whole[1]!);
    return template.replace(/\$\{([^}]+)\}/g, (_, reference: string) => String(cite(reference)));
  }
  if (Array.isArray(template)) return template.map((item) => interpolate(item, answers));
  if (typeof template === 'object' && template !== null) return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, interpolate(value, answers)]));
  return template;
}
