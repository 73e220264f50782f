import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/modules/identity/password.hash.js';

// The admin's password today, customers' logins next: hashed with scrypt, verified in constant time.
describe('passwords', () => {
  it('verifies the password it hashed, and nothing else', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('salts every hash, and compares Unicode passwords by their NFKC form', async () => {
    const [a, b] = await Promise.all([hashPassword('same'), hashPassword('same')]);
    expect(a).not.toBe(b);
    const composed = await hashPassword('caf\u00e9');
    expect(await verifyPassword('cafe\u0301', composed)).toBe(true);
  });

  it('refuses, without throwing, a stored value that is not a scrypt hash', async () => {
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$2b$10$abc')).toBe(false);
  });
});
