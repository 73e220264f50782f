import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Text that must be recoverable but never readable without APP_SECRET (webhook secrets, a new
 * key on its way to the page that shows it once): AES-256-GCM under a key derived from
 * APP_SECRET for one purpose, so a box made for one purpose opens for no other. `context`
 * (additional authenticated data) binds a box to what it was made for, such as a session.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(appSecret: string, purpose: string) {
    this.#key = Buffer.from(hkdfSync('sha256', appSecret, 'fromagerie', purpose, 32));
  }

  seal(text: string, context?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    if (context !== undefined) cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** Throws when the box was not made by this key, for this context, or was altered. */
  open(box: string, context?: string): string {
    const [version, iv, tag, sealed] = box.split('.');
    if (version !== 'v1' || !iv || !tag || sealed === undefined) throw new Error('unreadable sealed text');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    if (context !== undefined) decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}
