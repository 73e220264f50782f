/** What a request-supplied path is resolved against: never a real origin, so `//evil` is seen as another host. */
const HERE = 'http://dashboard.invalid';

/**
 * A path the request supplied (`next` of the sign-in, `back` of a form), made fit for a
 * Location header: a path under `under` on this site, percent-encoded by the WHATWG URL
 * serializer (non-ASCII in the path, query or fragment), its dot segments resolved; anything
 * else is `fallback`. Backslashes (`/\evil` is `//evil` to a browser) and control characters
 * (header injection, a path the browser would read otherwise) are refused, not repaired.
 * Every redirect the dashboard builds from request data goes through here: a Location with a
 * character Node refuses (ERR_INVALID_CHAR) would fail the reply after its cookies were decided.
 */
export function localPath(value: unknown, under: string, fallback: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || /[\\\p{Cc}]/u.test(value)) return fallback;
  let url: URL;
  try {
    url = new URL(value, HERE);
  } catch {
    return fallback;
  }
  if (url.origin !== HERE) return fallback;
  if (url.pathname !== under && !url.pathname.startsWith(`${under}/`)) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** A path of the dashboard, or the overview. */
export function dashboardPath(value: unknown): string {
  return localPath(value, '/dashboard', '/dashboard');
}
