import { getOnce } from './instance.js';

/**
 * After quiesce every instance, asked directly, answers the same bytes and ETag for each URL,
 * and a 304 to that ETag in If-None-Match (an ETag from one instance is good on another).
 */
/** A GET that waits out a 429 (its Retry-After, at most 5 s, 3 times): the load before may have spent the key's bucket. */
async function getPatiently(url: string, headers: Record<string, string>): Promise<Awaited<ReturnType<typeof getOnce>>> {
  for (let attempt = 0; ; attempt++) {
    const answer = await getOnce(url, headers, 5_000);
    if (answer.status !== 429 || attempt === 3) return answer;
    const retryAfter = Number(answer.headers['retry-after']);
    await new Promise((resolve) => setTimeout(resolve, Math.min(5, Number.isFinite(retryAfter) ? retryAfter : 1) * 1000));
  }
}

export async function checkSameEverywhere(bases: string[], urls: string[], apiKey: string): Promise<string[]> {
  const problems: string[] = [];
  for (const url of urls) {
    const answers = await Promise.all(bases.map((base) => getPatiently(`${base}${url}`, { 'x-api-key': apiKey, accept: 'application/json' })));
    const first = answers[0]!;
    answers.forEach((answer, i) => {
      if (answer.status !== first.status || answer.headers.etag !== first.headers.etag || !answer.body.equals(first.body)) {
        problems.push(`${url}: ${bases[0]} answered ${first.status} ETag ${first.headers.etag} (${first.body.length} bytes), ${bases[i]} answered ${answer.status} ETag ${answer.headers.etag} (${answer.body.length} bytes)`);
      }
    });
    const etag = first.headers.etag;
    if (first.status !== 200 || typeof etag !== 'string') continue;
    const revalidated = await Promise.all(bases.map((base) => getPatiently(`${base}${url}`, { 'x-api-key': apiKey, accept: 'application/json', 'if-none-match': etag })));
    revalidated.forEach((answer, i) => {
      if (answer.status !== 304) problems.push(`${url}: ${bases[i]} answered ${answer.status} to If-None-Match ${etag}, not 304`);
    });
  }
  return problems;
}
