import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/kernel/key-ring.js';
import { SecretBox } from '../../src/kernel/secret-box.js';
import { WebhookSecretsRepository } from '../../src/modules/webhooks/webhook-secrets.repository.js';
import { WebhookSecretsService } from '../../src/modules/webhooks/webhook-secrets.service.js';
import { createAdminTestApp, type TestApp } from '../helpers/app.js';
import { DIALECT } from '../helpers/database.js';

/**
 * `fromagerie secrets re-encrypt` (issue 29 §3): every stored webhook secret, current and a
 * roll's previous one, re-sealed under the current APP_SECRET; what no key opens reported and
 * left as it is; each write a compare-and-set, so a secret rolled meanwhile is never overwritten.
 */
const S1 = 'the-first-app-secret-of-this-deployment-0001';
const S2 = 'the-second-app-secret-after-the-rotation-0002';
const OTHER = 'a-secret-of-another-deployment-altogether-03';
const box = (ring: KeyRing) => new SecretBox(ring.keys('webhook-secrets'));
const during = box(new KeyRing({ appSecret: S2, appSecretPrevious: S1 }));
const after = box(new KeyRing({ appSecret: S2 }));

let t: TestApp;
let auth: Record<string, string>;
let repository: WebhookSecretsRepository;
beforeAll(async () => {
  ({ t, auth } = await createAdminTestApp({ config: { appSecret: S1 } }));
  repository = new WebhookSecretsRepository(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

async function register(n: number): Promise<{ id: number; secret: string }> {
  const res = await t.http.post<{ id: number; secret: string }>('/v2/webhooks', { headers: auth, json: { url: `http://127.0.0.1:9/hook-${n}`, events: ['order.placed'] } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe(`re-sealing stored webhook secrets under the current APP_SECRET (${DIALECT})`, () => {
  it('re-encrypts what the previous secret sealed, keeps what is current, reports and keeps what no key opens; a second run changes nothing', async () => {
    const [a, b, lost] = [await register(1), await register(2), await register(3)];
    // b's secret rolled: its previous secret (still signing for a day) is stored sealed too.
    const rolled = await t.http.post<{ secret: string }>(`/v2/webhooks/${b.id}/rotate-secret`, { headers: auth });
    expect(rolled.status, rolled.text).toBe(200);
    // lost's sealed under a secret neither key is.
    const lostRow = (await repository.sealedOf(lost.id))!;
    const foreign = box(new KeyRing({ appSecret: OTHER })).seal(lost.secret);
    expect(await repository.replaceSealed(lost.id, 'secret_ciphertext', lostRow.secret_ciphertext, foreign)).toBe(true);

    const service = new WebhookSecretsService({ secrets: repository, box: during });
    expect(await service.unreadable()).toBe(1);
    expect(await service.reseal()).toEqual({ reencrypted: 3, alreadyCurrent: 0, unreadable: 1, unreadableWebhookIds: [lost.id], changedMeanwhile: 0 });
    expect(await service.reseal()).toEqual({ reencrypted: 0, alreadyCurrent: 3, unreadable: 1, unreadableWebhookIds: [lost.id], changedMeanwhile: 0 });

    // Under the new secret alone, each opens to the secret its receiver holds; the unreadable one is untouched.
    expect(after.open((await repository.sealedOf(a.id))!.secret_ciphertext)).toBe(a.secret);
    const bRow = (await repository.sealedOf(b.id))!;
    expect(after.open(bRow.secret_ciphertext)).toBe(rolled.body.secret);
    expect(after.open(bRow.previous_secret_ciphertext!)).toBe(b.secret);
    expect((await repository.sealedOf(lost.id))!.secret_ciphertext).toBe(foreign);
  });

  it('never overwrites a secret rolled between its read and its write: the rolled one is judged instead', async () => {
    const c = await register(4);
    const rolledMeanwhile = box(new KeyRing({ appSecret: S1 })).seal('whsec_rolled_meanwhile');
    let rolls = 0;
    // An instance still on the old secret rolls c's secret just as the re-encryption writes.
    const racing = Object.create(repository, {
      replaceSealed: {
        value: async (id: number, column: 'secret_ciphertext' | 'previous_secret_ciphertext', old: string, next: string) => {
          if (id === c.id && column === 'secret_ciphertext' && rolls++ === 0) expect(await repository.replaceSealed(id, column, old, rolledMeanwhile)).toBe(true);
          return repository.replaceSealed(id, column, old, next);
        },
      },
    }) as WebhookSecretsRepository;
    const counts = await new WebhookSecretsService({ secrets: racing, box: during }).reseal();
    expect(counts).toMatchObject({ reencrypted: 1, changedMeanwhile: 0 });
    expect(after.open((await repository.sealedOf(c.id))!.secret_ciphertext)).toBe('whsec_rolled_meanwhile');
  });
});
