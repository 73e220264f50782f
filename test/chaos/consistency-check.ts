import { getOnce } from './instance.js';

/**
 * After quiesce every instance, asked directly, answers the same bytes and ETag for each URL,
 * and a 304 to that ETag in If-None-Match (an ETag from one instance is good on another).
 */
export async function checkSameEverywhere(bases: string[], urls: string[], apiKey: string): Promise<string[]> {
  const problems: string[] = [];
  for (const url of urls) {
    const answers = await Promise.all(bases.map((base) => getOnce(`${base}${url}`, { 'x-api-key': apiKey, accept: 'application/json' }, 5_000)));
    const first = answers[0]!;
    answers.forEach((answer, i) => {
      if (answer.status !== first.status || answer.headers.etag !== first.headers.etag || !answer.body.equals(first.body)) {
        problems.push(`${url}: ${bases[0]} answered ${first.status} ETag ${first.headers.etag} (${first.body.length} bytes), ${bases[i]} answered ${answer.status} ETag ${answer.headers.etag} (${answer.body.length} bytes)`);
      }
    });
    const etag = first.headers.etag;
    if (first.status !== 200 || typeof etag !== 'string') continue;
    const revalidated = await Promise.all(bases.map((base) => getOnce(`${base}${url}`, { 'x-api-key': apiKey, accept: 'application/json', 'if-none-match': etag }, 5_000)));
    revalidated.forEach((answer, i) => {
      if (answer.status !== 304) problems.push(`${url}: ${bases[i]} answered ${answer.status} to If-None-Match ${etag}, not 304`);
    });
  }
  return problems;
}
