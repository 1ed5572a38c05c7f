import type { ServerResponse } from 'node:http';
import { FastResponse } from 'srvx';
import { randomUUID } from 'node:crypto';
import { badRequest, RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { sessionHeader } from '../routing/conversation.js';
import { execute, finishOutcome } from './execute.js';
import { postJson } from './json-call.js';
import type { ProxyCall } from './outcome.js';
import { joinUrl, type Target } from '../providers/target.js';
import { attemptErrorResponse } from './upstream-error.js';

/** Usage an embeddings reply reports (`usage.prompt_tokens`), when it does. */
export function embeddingUsage(text: string): { inputTokens: number; outputTokens: number } | undefined {
  try {
    const u = (JSON.parse(text) as { usage?: { prompt_tokens?: unknown } }).usage;
    return typeof u?.prompt_tokens === 'number' ? { inputTokens: u.prompt_tokens, outputTokens: 0 } : undefined;
  } catch {
    return undefined;
  }
}

/** The request for one target: the client's body with the target's model id; refused by providers without the endpoint. */
function prepare(target: Target, raw: Record<string, unknown>): { url: string; body: string } {
  if (!target.provider.endpoints?.embeddings) throw badRequest(`Provider '${target.provider.id}' has no embeddings endpoint.`, 'model');
  return { url: joinUrl(target.baseUrl, 'embeddings'), body: JSON.stringify({ ...raw, model: target.model }) };
}

/**
 * POST /v1/embeddings to an OpenAI-compatible target, through the executor (scopes, quotas, breakers,
 * cooldowns, failover, usage). The reply body is forwarded as received; the upstream is asked for an
 * identity encoding and no content-encoding header is ever copied to the client.
 */
export async function runEmbeddings(ctx: RouteContext, raw: Record<string, unknown>): Promise<Response> {
  const t0 = performance.now();
  if (raw.input === undefined) throw badRequest("The 'input' field is required.", 'input');
  const { services } = ctx;
  const traceId = randomUUID();
  const h = ctx.event.req.headers;
  const call: ProxyCall = { clientFormat: 'openai-chat', raw, model: raw.model as string, stream: false, endpoint: '/v1/embeddings' };
  return execute(
    { services, auth: ctx.auth, call, traceId, t0, sessionKey: sessionHeader(h), client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') } },
    {
      prepare: (target) => prepare(target, raw),
      async attempt(target, req, outcome, limits) {
        const reply = await postJson(target, req.url, req.body, limits, { sink: ctx.event.req.runtime?.node?.res as ServerResponse | undefined });
        const usage = embeddingUsage(reply.text);
        outcome.status = 200;
        outcome.usage = usage;
        outcome.upstreamMs = reply.upstreamMs;
        finishOutcome(services, outcome, usage);
        return new FastResponse(reply.text, {
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'server-timing': `router;dur=${(performance.now() - t0 - reply.upstreamMs).toFixed(2)}, upstream;dur=${reply.upstreamMs.toFixed(2)}`,
            'x-router-version': services.version,
            'x-router-trace-id': traceId,
          },
        });
      },
      fail(last) {
        const failure = attemptErrorResponse(last, 'openai-chat', 'openai-chat', services.version, traceId);
        if (failure instanceof RouterError) throw failure;
        return failure;
      },
    },
  );
}
