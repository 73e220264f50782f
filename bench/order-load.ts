/** The order load of bench/cluster.ts: cheeses with ample stock, customers with tokens, and wrk's Lua script. */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

export const CHEESES = 40;
const CUSTOMERS = 20;
export const START_GRAMS = 10_000_000; // 10 tonnes each: no order is ever short

async function json(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
}

/** wrk's Lua `request`: one order of a random cheese (0.1 to 1.05 kg) for a random customer's token, seeded. */
export function ordersLuaRequest(cheeseIds: readonly number[], tokens: readonly string[]): string {
  return `local cheeses = {${cheeseIds.join(',')}}
local tokens = {${tokens.map((t) => JSON.stringify(t)).join(',')}}
math.randomseed(42)
request = function()
  local body = '{"items":[{"cheeseId":' .. cheeses[math.random(#cheeses)] .. ',"quantity_kg":' .. (math.random(1, 20) * 0.05 + 0.05) .. '}],"shipping":{"method":"standard","address":{"line1":"1 Bench Road","city":"Lyon","country":"FR"}}}'
  return wrk.format("POST", "/v2/orders", { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[math.random(#tokens)] }, body)
end
`;
}

/** Cheeses and customers made through the API (as in bench/orders.ts), and the script that orders them at random. */
export async function orderFixtures(base: string, staffKey: string, dir: string): Promise<{ cheeseIds: number[]; script: string; probe(base: string): Promise<string | undefined> }> {
  const staff = { authorization: `Bearer ${staffKey}` };
  const cheeseIds: number[] = [];
  for (let i = 0; i < CHEESES; i++) {
    const created = await json(`${base}/v2/cheeses`, 'POST', { name: `Cluster cheese ${i}`, pricePerKg: 10 + i, stockQuantityKg: START_GRAMS / 1000 }, staff);
    if (created.status !== 201) throw new Error(`creating a cheese: ${created.status} ${JSON.stringify(created.body)}`);
    cheeseIds.push(Number(created.body.id));
  }
  const tokens: string[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const username = `cluster.buyer.${i}`;
    const password = 'correct horse battery staple 42';
    if ((await json(`${base}/v2/customer`, 'POST', { username, email: `cluster${i}@example.com`, password })).status !== 201) throw new Error('sign-up failed');
    const login = await json(`${base}/v2/customer/login`, 'POST', { username, password });
    if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
    tokens.push(String(login.body.token));
  }
  const script = path.join(dir, 'orders.lua');
  fs.writeFileSync(
    script,
    `${ordersLuaRequest(cheeseIds, tokens)}local shown = 0
response = function(status, headers, body)
  if status >= 300 and shown < 3 then
    shown = shown + 1
    io.write("script: HTTP " .. status .. " " .. string.sub(body, 1, 300) .. "\\n")
    io.flush()
  end
end
`,
  );
  /** One order as the script sends it: undefined when placed, else what came back. */
  const probe = async (at: string) => {
    const body = { items: [{ cheeseId: cheeseIds[0], quantity_kg: 0.1 }], shipping: { method: 'standard', address: { line1: '1 Bench Road', city: 'Lyon', country: 'FR' } } };
    const placed = await json(`${at}/v2/orders`, 'POST', body, { authorization: `Bearer ${tokens[0]}` });
    return placed.status === 201 ? undefined : `${placed.status} ${JSON.stringify(placed.body)}`;
  };
  return { cheeseIds, script, probe };
}

/** Stock exact: every bench cheese's start, minus what its order lines hold (one query, both read in one snapshot). */
export async function stockExact(databaseUrl: string, cheeseIds: number[]): Promise<{ exact: boolean; orders: number; detail: string }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select (select coalesce(sum(stock_grams), 0) from cheeses where id = any($1)) as stock,
              (select coalesce(sum(grams), 0) from order_items where cheese_id = any($1)) as held,
              (select count(distinct order_id) from order_items where cheese_id = any($1)) as orders`,
      [cheeseIds],
    );
    const stock = Number(rows[0].stock);
    const held = Number(rows[0].held);
    const expected = cheeseIds.length * START_GRAMS - held;
    return { exact: stock === expected, orders: Number(rows[0].orders), detail: `${stock} g in stock, ${expected} g expected` };
  } finally {
    await client.end();
  }
}
