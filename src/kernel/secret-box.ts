import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keys } from './key-ring.js';

/** What opening a box found: the text, and whether the current key sealed it (false: a previous APP_SECRET's). */
export interface Opened {
  text: string;
  current: boolean;
}

/**
 * Text that must be recoverable but never readable without APP_SECRET (webhook secrets, a new
 * key on its way to the page that shows it once): AES-256-GCM under the key ring's key for one
 * purpose, so a box made for one purpose opens for no other. `context` (additional
 * authenticated data) binds a box to what it was made for, such as a session. Boxes are sealed
 * with the current key and open under the previous one too while APP_SECRET is rotated
 * (`fromagerie secrets re-encrypt` re-seals the stored ones).
 */
export class SecretBox {
  constructor(private readonly keys: Keys) {}

  seal(text: string, context?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.current, iv);
    if (context !== undefined) cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** Throws when the box was not made by one of the keys, for this context, or was altered. */
  open(box: string, context?: string): string {
    return this.openWith(box, context).text;
  }

  /** As `open`, also saying whether the box is sealed with the current key (re-encryption skips those). */
  openWith(box: string, context?: string): Opened {
    const [version, iv, tag, sealed] = box.split('.');
    if (version !== 'v1' || !iv || !tag || sealed === undefined) throw new Error('unreadable sealed text');
    for (const [index, key] of this.keys.all.entries()) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        if (context !== undefined) decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return { text: Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8'), current: index === 0 };
      } catch {
        // Not this key's (or altered): the next key is tried; none left is the error below.
      }
    }
    throw new Error('unreadable sealed text');
  }
}
