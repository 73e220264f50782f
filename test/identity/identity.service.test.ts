import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/kernel/errors.js';
import { createTestModules, type TestModules } from '../helpers/modules.js';

/**
 * Identity's services over a real database, without HTTP (issue 29 §2, the service tier):
 * accounts, plans, and API keys as the other modules and the CLI use them.
 */
let m: TestModules;

beforeAll(async () => {
  m = await createTestModules();
}, 60_000);
afterAll(() => m?.close());

describe('the identity services', () => {
  it('registers an account once per username, regardless of case', async () => {
    const customer = await m.customer();
    const { accounts } = m.modules.identity.provides;
    expect(await accounts.findByUsername(customer.username.toUpperCase())).toMatchObject({ id: customer.accountId, role: 'customer' });
    await expect(m.database.db.transaction().execute((trx) => accounts.register(trx, { username: customer.username.toUpperCase(), email: 'other@example.com', password: 'a long enough password' }))).rejects.toBeInstanceOf(ConflictError);
  });

  it('moves an account between plans', async () => {
    const customer = await m.customer();
    const { accounts } = m.modules.identity.provides;
    expect(await accounts.planOf(customer.accountId)).toBe('free');
    expect(await accounts.setPlan(customer.username, 'pro')).toEqual({ username: customer.username, plan: 'pro' });
    expect(await accounts.planOf(customer.accountId)).toBe('pro');
  });

  it('creates an API key that lists without its secret, and revokes it once', async () => {
    const customer = await m.customer();
    const { apiKeys } = m.modules.identity.provides;
    const created = await apiKeys.create({ accountId: customer.accountId, role: 'customer' }, { scopes: ['read:cheeses'] }, customer);
    expect(created.key).toMatch(/^sk_/);
    const listed = await apiKeys.list(customer.accountId);
    expect(listed.map((k) => k.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(await apiKeys.revoke(customer.accountId, created.id, customer)).toEqual({ alreadyRevokedAt: null });
    expect((await apiKeys.revoke(customer.accountId, created.id, customer)).alreadyRevokedAt).not.toBeNull();
    expect((await apiKeys.list(customer.accountId)).map((k) => k.id)).not.toContain(created.id);
  });
});
