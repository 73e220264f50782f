import { ADMIN_PASSWORD } from './cluster.js';
import { Client, expectStatus, type Exchange } from './client.js';

/** What the load works on, made through the API before it starts. */
export interface World {
  adminToken: string;
  /** Each with an API key (`GET /v2/cheeses/{id}` takes API keys only) for reads, orders and cancellations. */
  customers: { username: string; key: string }[];
  /** On the Free plan and used by the metered client alone: its answers show the account's one budget (limit-check.ts). */
  metered: { username: string; key: string };
  /** Little stock: the load asks for more than there is, so oversell would show. */
  scarce: { id: number; grams: number };
  /** Ample stock. */
  plenty: { id: number; grams: number }[];
  /** Renamed by the load, one cheese per load worker (so the last acknowledged name is known). */
  editable: number[];
  webhookId: number;
  /** Catalogue URLs compared across instances after quiesce. */
  catalogueUrls: string[];
}

export const SCARCE_KG = 12;
const PLENTY_KG = 100_000;
const PASSWORD = 'chaos customer password 42';

/** Sign-ups, login tokens, cheeses and a webhook for every event, through `base` (HAProxy or one instance). */
export async function buildWorld(base: string, webhookUrl: string, options: { customers: number; editable: number }): Promise<World> {
  const setup: Exchange[] = [];
  const client = new Client(base, setup);
  try {
    const login = async (username: string, password: string) => {
      const answer = expectStatus(await client.send('setup', 'POST', '/v2/customer/login', { body: { username, password } }), 200, `login of ${username}`);
      return String((answer.json as { token: string }).token);
    };
    const adminToken = await login('admin', ADMIN_PASSWORD);
    const staff = { authorization: `Bearer ${adminToken}` };
    const cheese = async (name: string, kg: number) => {
      const answer = expectStatus(await client.send('setup', 'POST', '/v2/cheeses', { headers: staff, body: { name, pricePerKg: 20, stockQuantityKg: kg } }), 201, `creating ${name}`);
      return Number((answer.json as { id: number }).id);
    };
    const scarce = { id: await cheese('Chaos Scarce Tomme', SCARCE_KG), grams: SCARCE_KG * 1000 };
    const plenty: World['plenty'] = [];
    for (let i = 1; i <= 3; i++) plenty.push({ id: await cheese(`Chaos Plenty ${i}`, PLENTY_KG), grams: PLENTY_KG * 1000 });
    const editable: number[] = [];
    for (let i = 1; i <= options.editable; i++) editable.push(await cheese(`Chaos Editable ${i}`, 5));

    const customer = async (username: string, scopes: string[]) => {
      expectStatus(await client.send('setup', 'POST', '/v2/customer', { body: { username, email: `${username}@example.com`, password: PASSWORD } }), 201, `sign-up of ${username}`);
      const token = await login(username, PASSWORD);
      const key = expectStatus(await client.send('setup', 'POST', '/v2/api-keys', { headers: { authorization: `Bearer ${token}` }, body: { name: 'chaos load', scopes } }), 201, `an API key for ${username}`);
      return { username, key: String((key.json as { key: string }).key) };
    };
    const customers: World['customers'] = [];
    for (let i = 1; i <= options.customers; i++) customers.push(await customer(`chaos.buyer.${i}`, ['read:cheeses', 'read:orders', 'write:orders']));
    const metered = await customer('chaos.metered', ['read:cheeses']);
    const webhook = expectStatus(await client.send('setup', 'POST', '/v2/webhooks', { headers: staff, body: { url: webhookUrl, events: ['*'], maxAttempts: 5 } }), 201, 'creating the webhook');
    return {
      adminToken,
      customers,
      metered,
      scarce,
      plenty,
      editable,
      webhookId: Number((webhook.json as { id: number }).id),
      catalogueUrls: ['/v2/cheeses?limit=50', `/v2/cheeses/${scarce.id}`, ...editable.map((id) => `/v2/cheeses/${id}`)],
    };
  } finally {
    client.close();
  }
}
