import { sanitizeMessage } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { Connection } from './connections.js';
import { fetchUpstreamModels } from './sync.js';
import { testAllReply } from './replies.js';

/** Connections tested at once by test-all: enough to be quick, few enough not to look like a flood upstream. */
const TEST_ALL_CONCURRENCY = 4;

/** The result of testing one connection against its upstream (its model list). */
export interface ConnectionTest {
  ok: boolean;
  latencyMs: number;
  /** Models the upstream listed (ok only). */
  models?: number;
  error?: string;
}

/**
 * Tests one connection by listing its upstream's models, records the result on the connection (status,
 * error, time), and, for a provider node, keeps the models found as its catalog.
 */
export async function testConnection(services: Services, c: Connection): Promise<ConnectionTest> {
  const def = services.providers.provider(c.provider);
  if (!def) return { ok: false, latencyMs: 0, error: `the provider '${c.provider}' of this connection no longer exists` };
  const t0 = performance.now();
  const result = await fetchUpstreamModels(def, c, services.providers.connectionTarget(def, c)).then(
    async (models) => {
      // A node has no shipped model list: what a successful test found becomes its catalog.
      if (services.nodes.get(def.id)) await services.syncedModels.replace(def.id, models);
      return { ok: true as const, models: models.length };
    },
    (err: Error) => ({ ok: false as const, error: sanitizeMessage(err.message) }),
  );
  const latencyMs = Math.round(performance.now() - t0);
  await services.connections.update(c.id, {
    testStatus: result.ok ? 'ok' : 'error',
    lastError: result.ok ? null : result.error,
    lastTestedAt: new Date().toISOString(),
  });
  return { ...result, latencyMs };
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
async function bounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export const healthRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/providers/test-all',
    tier: 'management',
    tag: 'providers',
    summary: `Test every connection against its upstream (${TEST_ALL_CONCURRENCY} at a time): ok, latency, models found, error`,
    reply: testAllReply,
    handler: async ({ services }) => {
      const connections = services.connections.list();
      const tests = await bounded(connections, TEST_ALL_CONCURRENCY, (c) => testConnection(services, c));
      const results = connections.map((c, i) => ({
        connectionId: c.id,
        // `id` is what earlier versions sent; kept so their readers keep working.
        id: c.id,
        name: c.name,
        provider: services.providers.label(c.provider),
        providerId: c.provider,
        isActive: c.isActive,
        ...tests[i]!,
      }));
      return { ok: results.filter((r) => r.ok).length, failed: results.filter((r) => !r.ok).length, results };
    },
  }),
];
