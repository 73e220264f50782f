import type { SecretBox } from '../../kernel/secret-box.js';
import { SEALED_COLUMNS, type SealedColumn, type SealedRow, type WebhookSecretsRepository } from './webhook-secrets.repository.js';

/** Per stored secret (a webhook holds one, or two during its own secret roll). */
export interface ResealCounts {
  /** Sealed under the previous APP_SECRET, now under the current one. */
  reencrypted: number;
  /** Already sealed under the current APP_SECRET: left as they are. */
  alreadyCurrent: number;
  /** Opened by neither key: left as they are (never deleted), their webhooks named in `unreadableWebhookIds`. */
  unreadable: number;
  unreadableWebhookIds: number[];
  /** Changed by someone else at every try (a secret rolled again and again): left for the next run. */
  changedMeanwhile: number;
}

const BATCH = 500;
/** A row whose secret keeps changing under us (rolled again and again) is left for the next run after this many tries. */
const TRIES = 3;

/**
 * Stored webhook secrets across an APP_SECRET rotation (issue 29 §3, issue 32 §2): while
 * APP_SECRET_PREVIOUS is set they open under either key; `reseal` seals every one under the
 * current key, so the previous secret can then be dropped. Idempotent; safe beside running
 * instances (each write is a compare-and-set on the ciphertext it read).
 */
export class WebhookSecretsService {
  constructor(private readonly options: { secrets: WebhookSecretsRepository; box: SecretBox }) {}

  async reseal(): Promise<ResealCounts> {
    const counts: ResealCounts = { reencrypted: 0, alreadyCurrent: 0, unreadable: 0, unreadableWebhookIds: [], changedMeanwhile: 0 };
    await this.#walk(async (row) => {
      let unreadable = false;
      for (const column of SEALED_COLUMNS) {
        const outcome = await this.#resealColumn(row, column);
        if (outcome !== 'absent') counts[outcome]++;
        unreadable ||= outcome === 'unreadable';
      }
      if (unreadable) counts.unreadableWebhookIds.push(row.id);
    });
    return counts;
  }

  /** How many stored secrets open under neither key (start-up says so: their deliveries cannot be signed). */
  async unreadable(): Promise<number> {
    let count = 0;
    await this.#walk(async (row) => {
      for (const sealed of sealedOf(row)) if (this.#open(sealed) === undefined) count++;
    });
    return count;
  }

  async #walk(visit: (row: SealedRow) => Promise<void>): Promise<void> {
    let afterId = 0;
    for (;;) {
      const rows = await this.options.secrets.sealedAfter(afterId, BATCH);
      for (const row of rows) await visit(row);
      if (rows.length < BATCH) return;
      afterId = rows.at(-1)!.id;
    }
  }

  async #resealColumn(row: SealedRow, column: SealedColumn): Promise<keyof Omit<ResealCounts, 'unreadableWebhookIds'> | 'absent'> {
    let sealed = row[column];
    for (let attempt = 1; sealed !== null && attempt <= TRIES; attempt++) {
      const opened = this.#open(sealed);
      if (opened === undefined) return 'unreadable';
      if (opened.current) return 'alreadyCurrent';
      if (await this.options.secrets.replaceSealed(row.id, column, sealed, this.options.box.seal(opened.text))) return 'reencrypted';
      // Rolled or re-sealed meanwhile: judged again as it is now (gone, or no previous secret any more: nothing to do).
      sealed = (await this.options.secrets.sealedOf(row.id))?.[column] ?? null;
    }
    // Still changing after every try (rolled again and again): the next run takes it.
    return sealed === null ? 'absent' : 'changedMeanwhile';
  }

  #open(sealed: string) {
    try {
      return this.options.box.openWith(sealed);
    } catch {
      return undefined;
    }
  }
}

function sealedOf(row: SealedRow): string[] {
  return SEALED_COLUMNS.map((column) => row[column]).filter((sealed): sealed is string => sealed !== null);
}
