import { z } from 'zod';
import { RouterError, sanitizeMessage } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { internalChat } from './internal-call.js';
import { modelTestReply } from '../providers/replies.js';

/** How long a model test may take before it is reported as failed. */
const MODEL_TEST_TIMEOUT_MS = 60_000;

const modelTestBody = z.strictObject({ model: z.string().trim().min(1).max(300) });

/**
 * The model test: one real request through the executor (targets, breakers, failover, a usage row), so it
 * lives with the proxy; the connection tests, which only list an upstream's models, are providers/health.ts.
 */
export const modelTestRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/models/test',
    tier: 'management',
    tag: 'providers',
    summary:
      'Send a real one-token request to a model or combo through the executor: which target answered, latency, tokens and cost (or the error in words)',
    body: modelTestBody,
    reply: modelTestReply,
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
