import { FastResponse } from 'srvx';
import { badRequest } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { resolveTargets } from './resolve.js';
import { joinUrl, targetHeaders } from './target.js';
import { attemptErrorResponse, AttemptError, httpAttemptError, networkAttemptError } from './upstream-error.js';
import { sendUpstream } from './upstream.js';
import { RouterError } from '../http/errors.js';
import { redactSecrets } from '../providers/mask.js';

/**
 * POST /v1/embeddings to an OpenAI-compatible target. The reply body is forwarded as received; the
 * upstream is asked for an identity encoding and no content-encoding header is ever copied to the client.
 */
export async function runEmbeddings(ctx: RouteContext, raw: Record<string, unknown>): Promise<Response> {
  const t0 = performance.now();
  const targets = resolveTargets(ctx.services, raw.model);
  if (raw.input === undefined) throw badRequest("The 'input' field is required.", 'input');
  let last: AttemptError | undefined;
  // The request deadline covers the whole call, reply body included, whatever state its reader is in.
  const deadline = AbortSignal.timeout(ctx.services.settings.get().requestDeadlineMs);
  for (const target of targets) {
    if (!target.provider.endpoints?.embeddings) {
      throw badRequest(`Provider '${target.provider.id}' has no embeddings endpoint.`, 'model');
    }
    const tSend = performance.now();
    try {
      const reply = await sendUpstream({
        url: joinUrl(target.baseUrl, 'embeddings'),
        headers: { ...targetHeaders(target, 'application/json'), 'accept-encoding': 'identity' },
        body: JSON.stringify({ ...raw, model: target.model }),
        signal: deadline,
      }).catch((err) => {
        throw networkAttemptError(err, deadline.aborted);
      });
      if (reply.statusCode >= 400) {
        const error = await reply.textUpTo(1024 * 1024);
        throw httpAttemptError(reply.statusCode, redactSecrets(error, Object.values(target.credential)), reply.headers);
      }
      const text = await reply.text().catch((err) => {
        throw networkAttemptError(err, deadline.aborted);
      });
      const upstreamMs = performance.now() - tSend;
      return new FastResponse(text, {
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'server-timing': `router;dur=${(performance.now() - t0 - upstreamMs).toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`,
          'x-router-version': ctx.services.version,
        },
      });
    } catch (err) {
      last = err instanceof AttemptError ? err : networkAttemptError(err, false);
      if (!last.retryable) break;
    }
  }
  const failure = attemptErrorResponse(last!, 'openai-chat', 'openai-chat', ctx.services.version);
  if (failure instanceof RouterError) throw failure;
  return failure;
}
