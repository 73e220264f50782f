import fs from 'node:fs/promises';
import path from 'node:path';

/** Where image bytes live. The filesystem now; object storage can implement the same three calls. */
export interface ImageStorage {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
}

const KEY_PATTERN = /^[a-z0-9/_.-]+$/;

export class FileSystemImageStorage implements ImageStorage {
  constructor(private readonly root: string) {}

  #path(key: string): string {
    // Keys are made by us, but a path must never escape the root whatever they hold.
    if (!KEY_PATTERN.test(key) || key.includes('..')) throw new Error(`invalid storage key ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const file = this.#path(key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temporary = `${file}.${process.pid}.tmp`;
    await fs.writeFile(temporary, data);
    await fs.rename(temporary, file);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.#path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.#path(key), { force: true });
  }
}
