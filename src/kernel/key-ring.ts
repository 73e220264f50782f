import { hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The one place keys are derived from APP_SECRET (issue 29 §3). Each purpose has its own
 * label, and each label keeps the exact HKDF salt and info its site used before the key
 * ring existed, so every cursor, token and sealed secret made before stays valid. Modules
 * and pages get keys (a `Keys` per purpose), never the secret itself; the architecture test
 * (test/architecture/key-ring.test.ts) holds every other file to that.
 */
const DERIVATIONS = {
  'pagination-cursors': { salt: '', info: 'fromagerie pagination cursor v1' },
  'login-tokens': { salt: '', info: 'fromagerie login token v1' },
  'oauth-consent': { salt: '', info: 'fromagerie oauth consent v2' },
  'page-csrf': { salt: 'fromagerie', info: 'page-csrf' },
  'webhook-secrets': { salt: 'fromagerie', info: 'webhook-secrets' },
  'dashboard-reveals': { salt: 'fromagerie', info: 'dashboard-reveals' },
} as const satisfies Record<string, { salt: string; info: string }>;

export type KeyLabel = keyof typeof DERIVATIONS;

export const KEY_LABELS = Object.keys(DERIVATIONS) as KeyLabel[];

/**
 * One purpose's keys: what is made now is made with `current`; what is checked or opened is
 * accepted under any of `all` (the current key first, then the previous secret's, during a
 * rotation of APP_SECRET).
 */
export interface Keys {
  readonly label: KeyLabel;
  readonly current: Buffer;
  /** The current key, then the previous ones (at most one: APP_SECRET_PREVIOUS). */
  readonly all: readonly Buffer[];
}

/** The secrets keys are derived from: the deployment's configuration (APP_SECRET, APP_SECRET_PREVIOUS). */
export interface KeySecrets {
  appSecret: string;
  appSecretPrevious?: string | undefined;
}

export class KeyRing {
  readonly #secrets: readonly string[];
  readonly #keys = new Map<KeyLabel, Keys>();

  constructor(secrets: KeySecrets) {
    this.#secrets = secrets.appSecretPrevious ? [secrets.appSecret, secrets.appSecretPrevious] : [secrets.appSecret];
  }

  keys(label: KeyLabel): Keys {
    let keys = this.#keys.get(label);
    if (!keys) {
      const { salt, info } = DERIVATIONS[label];
      const all = this.#secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, salt, info, 32)));
      keys = { label, current: all[0]!, all };
      this.#keys.set(label, keys);
    }
    return keys;
  }
}

/**
 * Whether `given` equals one of `expected` (tags made under each key), in constant time:
 * every candidate is compared, whichever matches, so the time says nothing of which key made it.
 */
export function matchesAny(given: string, expected: readonly string[]): boolean {
  const actual = Buffer.from(given);
  let matched = false;
  for (const candidate of expected) {
    const wanted = Buffer.from(candidate);
    // Compared against itself when the lengths differ: the same work, never a match.
    const equal = timingSafeEqual(wanted.length === actual.length ? wanted : actual, actual) && wanted.length === actual.length;
    matched = equal || matched;
  }
  return matched;
}
