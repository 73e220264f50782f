/**
 * Gathers items added in the same turn of the event loop and writes them with one call
 * (one transaction instead of one per item); each `add` resolves when its batch is written.
 */
export class Batch<T> {
  #items: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  #scheduled = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxSize = 200,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#items.push({ item, resolve, reject });
      if (this.#items.length >= this.maxSize) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const taken = this.#items;
    if (taken.length === 0) return;
    this.#items = [];
    this.write(taken.map((entry) => entry.item)).then(
      () => taken.forEach((entry) => entry.resolve()),
      (err: unknown) => taken.forEach((entry) => entry.reject(err)),
    );
  }
}
