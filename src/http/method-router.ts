import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

/**
 * Fastify answers 404 for a known path with the wrong method; this shadow router lets the
 * not-found handler tell 405 (with Allow) from 404.
 */
export function trackRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  const methodsByRoute = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    // CORS answers preflights on every path: that says nothing about which paths exist.
    if (route.url === '*' || route.url === '/*') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let known = methodsByRoute.get(route.url);
    if (!known) {
      known = new Set();
      methodsByRoute.set(route.url, known);
      router.on('GET' as HTTPMethod, route.url, () => {}, { url: route.url });
    }
    for (const m of methods) known.add(m);
  });
  return (path) => {
    let found;
    try {
      found = router.find('GET' as HTTPMethod, path);
    } catch {
      return [];
    }
    const url = (found?.store as { url?: string } | undefined)?.url;
    return url ? [...(methodsByRoute.get(url) ?? [])].sort() : [];
  };
}
