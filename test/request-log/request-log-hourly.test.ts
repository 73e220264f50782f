import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestLogRepository } from '../../src/modules/request-log/request-log.repository.js';
import type { RequestLogEntry } from '../../src/modules/request-log/request-log.recorder.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/**
 * The request log's hourly counts (issue 31, the overview's requests per hour) on the configured
 * dialect, over rows written as the recorder writes them: per hour and status class, per
 * account or every account, one environment, the window's first id found by bisecting the ids.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

let n = 0;
const entry = (accountId: number, environment: string, at: string, status: number): RequestLogEntry => ({
  request_id: `req_hourly_${++n}`,
  account_id: accountId,
  environment,
  created_at: at,
  method: 'GET',
  route: '/v2/orders',
  path: '/v2/orders',
  query: '',
  status,
  duration_ms: 1.5,
  credential_kind: 'api_key',
  credential_label: 'ch_test_hourly',
  idempotency_key: null,
  client_ip: '127.0.0.1',
  user_agent: null,
  request_headers: '{}',
  response_headers: '{}',
  request_body: null,
  response_body: null,
});

describe('RequestLogRepository.hourlyCounts', () => {
  it('counts per hour and status class within [from, to), of one account or all, of one environment; an entry out of arrival order by seconds is counted', async () => {
    const repository = new RequestLogRepository(t.database.db);
    const [a, b] = [900_001, 900_002];
    expect(await repository.hourlyCounts(a, 'staging', '2030-01-01T00:00:00.000Z', '2030-01-02T00:00:00.000Z')).toEqual([]);
    const rows: RequestLogEntry[] = [
      entry(a, 'staging', '2030-01-01T09:59:59.000Z', 200), // before the window
      entry(a, 'staging', '2030-01-01T10:00:00.000Z', 200),
      entry(a, 'staging', '2030-01-01T10:20:00.000Z', 201),
      entry(b, 'staging', '2030-01-01T10:30:00.000Z', 500),
      entry(a, 'staging', '2030-01-01T10:40:00.000Z', 404),
      entry(a, 'production', '2030-01-01T10:41:00.000Z', 200), // another environment
      entry(a, 'staging', '2030-01-01T11:05:00.000Z', 302),
      // Written after the 11:05 entry, stamped 20 s before the hour: it arrived late.
      entry(a, 'staging', '2030-01-01T10:59:40.000Z', 404),
      entry(a, 'staging', '2030-01-01T12:00:00.000Z', 200), // at the window's end: outside
    ];
    for (const row of rows) await repository.insertBatch([row]);
    const sorted = (counts: Awaited<ReturnType<RequestLogRepository['hourlyCounts']>>) => [...counts].sort((x, y) => x.hour.localeCompare(y.hour) || x.statusClass - y.statusClass);
    expect(sorted(await repository.hourlyCounts(a, 'staging', '2030-01-01T10:00:00.000Z', '2030-01-01T12:00:00.000Z'))).toEqual([
      { hour: '2030-01-01T10', statusClass: 2, count: 2 },
      { hour: '2030-01-01T10', statusClass: 4, count: 2 },
      { hour: '2030-01-01T11', statusClass: 3, count: 1 },
    ]);
    expect(sorted(await repository.hourlyCounts(null, 'staging', '2030-01-01T10:00:00.000Z', '2030-01-01T12:00:00.000Z'))).toEqual([
      { hour: '2030-01-01T10', statusClass: 2, count: 2 },
      { hour: '2030-01-01T10', statusClass: 4, count: 2 },
      { hour: '2030-01-01T10', statusClass: 5, count: 1 },
      { hour: '2030-01-01T11', statusClass: 3, count: 1 },
    ]);
    expect(await repository.hourlyCounts(a, 'production', '2030-01-01T10:00:00.000Z', '2030-01-01T12:00:00.000Z')).toEqual([{ hour: '2030-01-01T10', statusClass: 2, count: 1 }]);
    // A window after every entry, and one before them all.
    expect(await repository.hourlyCounts(a, 'staging', '2030-01-01T13:00:00.000Z', '2030-01-01T14:00:00.000Z')).toEqual([]);
    expect(await repository.hourlyCounts(a, 'staging', '2029-12-31T00:00:00.000Z', '2029-12-31T01:00:00.000Z')).toEqual([]);
  });
});
