import { CodecError } from '../../translate/errors.js';
import type { Family } from '../family.js';
import { badField, JSON_TYPE, jsonAsk, tryJson } from '../util.js';
import { embeddingsReply } from './reply.js';

/**
 * POST /v1/embeddings to OpenAI-compatible targets: the client's body with the target's model id, the
 * reply forwarded as received (asked for an identity encoding; no content-encoding header is copied).
 */

/** Usage an embeddings reply reports (`usage.prompt_tokens`), when it does. */
export function embeddingUsage(text: string): { inputTokens: number; outputTokens: number } | undefined {
  const u = (tryJson(text) as { usage?: { prompt_tokens?: unknown } } | undefined)?.usage;
  return typeof u?.prompt_tokens === 'number' ? { inputTokens: u.prompt_tokens, outputTokens: 0 } : undefined;
}

export const embeddings: Family<Record<string, unknown>> = {
  name: 'embeddings',
  route: { path: '/v1/embeddings', body: 'json', summary: 'Embeddings (OpenAI-compatible); upstream content-encoding headers are stripped', reply: embeddingsReply },
  read({ json }) {
    if (json!.input === undefined) throw badField("The 'input' field is required.", 'input');
    return json!;
  },
  call: (raw) => ({ model: raw.model as string, raw, stream: false }),
  encode(raw, target) {
    if (!target.provider.endpoints?.embeddings) throw new CodecError(400, `Provider '${target.provider.id}' has no embeddings endpoint.`, { param: 'model' });
    return jsonAsk('embeddings', raw, target.model);
  },
  decode([reply]) {
    return { body: reply!.text, contentType: JSON_TYPE, usage: embeddingUsage(reply!.text) };
  },
};
