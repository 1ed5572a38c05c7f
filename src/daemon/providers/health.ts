import { z } from 'zod';
import { RouterError, sanitizeMessage } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { internalChat } from '../proxy/internal-call.js';
import type { Services } from '../services.js';
import type { Connection } from './connections.js';
import { fetchUpstreamModels } from './sync.js';

/** Connections tested at once by test-all: enough to be quick, few enough not to look like a flood upstream. */
const TEST_ALL_CONCURRENCY = 4;
/** How long a model test may take before it is reported as failed. */
const MODEL_TEST_TIMEOUT_MS = 60_000;

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
    (models) => {
      // A node has no shipped model list: what a successful test found becomes its catalog.
      if (services.nodes.get(def.id)) services.syncedModels.replace(def.id, models);
      return { ok: true as const, models: models.length };
    },
    (err: Error) => ({ ok: false as const, error: sanitizeMessage(err.message) }),
  );
  const latencyMs = Math.round(performance.now() - t0);
  services.connections.update(c.id, {
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

const modelTestBody = z.strictObject({ model: z.string().trim().min(1).max(300) });

export const healthRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/providers/test-all',
    tier: 'management',
    tag: 'providers',
    summary: `Test every connection against its upstream (${TEST_ALL_CONCURRENCY} at a time): ok, latency, models found, error`,
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
  route({
    method: 'POST',
    path: '/api/models/test',
    tier: 'management',
    tag: 'providers',
    summary:
      'Send a real one-token request to a model or combo through the executor: which target answered, latency, tokens and cost (or the error in words)',
    body: modelTestBody,
    handler: async ({ services, body }) => {
      const t0 = performance.now();
      try {
        const r = await internalChat(services, { endpoint: 'models:test', model: body.model, user: 'ping', maxTokens: 1, timeoutMs: MODEL_TEST_TIMEOUT_MS });
        const usage = { inputTokens: r.usage?.inputTokens ?? 0, outputTokens: r.usage?.outputTokens ?? 0 };
        const connection = r.target.connectionId ? services.connections.get(r.target.connectionId) : undefined;
        return {
          ok: true,
          model: body.model,
          provider: services.providers.label(r.target.provider.id),
          served: {
            model: `${services.providers.label(r.target.provider.id)}/${r.target.model}`,
            provider: services.providers.label(r.target.provider.id),
            providerId: r.target.provider.id,
            connectionId: r.target.connectionId ?? null,
            connectionName: connection?.name ?? null,
          },
          latencyMs: Math.round(performance.now() - t0),
          upstreamMs: Math.round(r.upstreamMs),
          tokensIn: usage.inputTokens,
          tokensOut: usage.outputTokens,
          costUsd: services.usage.pricing.cost(r.target.provider.id, r.target.model, usage).costUsd,
          reply: r.value.slice(0, 200),
          traceId: r.traceId,
        };
      } catch (err) {
        // What the client would have been told (unknown model, no connection...) stays an error reply;
        // an upstream that failed is the test's finding.
        if (err instanceof RouterError && err.status < 500 && err.status !== 429) throw err;
        return {
          ok: false,
          model: body.model,
          // The provider of the last target tried (the one whose failure is reported).
          provider: (err as { provider?: string }).provider ?? null,
          latencyMs: Math.round(performance.now() - t0),
          error: sanitizeMessage((err as Error).message),
        };
      }
    },
  }),
];
