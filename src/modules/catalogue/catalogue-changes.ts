/**
 * Tells whoever caches catalogue reads that a write has committed: the HTTP read cache today,
 * a cross-instance fan-out (Redis) when several instances share one database.
 */
export class CatalogueChanges {
  readonly #listeners: (() => void)[] = [];

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  changed(): void {
    for (const listener of this.#listeners) listener();
  }

  /** Runs a write and signals a change once it has finished, committed or not (a spare signal costs one cache refill). */
  async after<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.changed();
    }
  }
}
