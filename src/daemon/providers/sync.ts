import { joinUrl, targetHeaders, type Target } from './target.js';
import { connectionProxy } from '../net/outbound-proxy.js';
import { sendUpstream } from '../net/upstream.js';
import { classifyFailure, extractUpstreamError, formatProviderError, type ClassifiedFailure } from '../routing/provider-error.js';
import type { Connection } from './connections.js';
import { redactSecrets } from '../../shared/mask.js';
import { getUpstreamCodec } from '../translate/registry.js';
import { networkFailureText } from '../net/probe.js';
import type { ModelInfo, ProviderDef } from './types.js';

/** Reads the model ids out of a model-list reply in the provider's format (the codec knows its shape). */
export function parseModelList(format: ProviderDef['format'], body: unknown): ModelInfo[] {
  return getUpstreamCodec(format).parseModels(body);
}

/** A refused model-list call, classified like any attempt (the reactive expiry check reads `failure`). */
export class ModelListError extends Error {
  override name = 'ModelListError';
  constructor(
    message: string,
    readonly failure: ClassifiedFailure,
  ) {
    super(message);
  }
}

/**
 * Lists a connection's models upstream (`GET {base}/models`, or the POST the codec names); throws with a
 * formatted provider error.
 * `built` is the connection as the directory targets it (base URL overrides, connection headers).
 */
export async function fetchUpstreamModels(def: ProviderDef, c: Connection, built?: Target): Promise<ModelInfo[]> {
  const target: Target = built ?? {
    provider: def,
    model: '',
    publicModel: '',
    connectionId: c.id,
    credential: c.credential,
    baseUrl: typeof c.providerSpecificData.baseUrl === 'string' ? c.providerSpecificData.baseUrl : def.baseUrl,
    headers: {},
    format: def.format,
    proxy: connectionProxy(c),
  };
  const codec = getUpstreamCodec(def.format);
  const body = codec.modelsBody?.(target.project);
  const url = joinUrl(target.baseUrl, codec.modelsPath);
  // A network failure in words naming the host, never the raw exception text (it reaches test-all's reply).
  const unreachable = (err: unknown): never => {
    throw new Error(`The model list could not be fetched: ${networkFailureText(err, url)}.`);
  };
  const reply = await sendUpstream({
    url,
    method: body ? 'POST' : 'GET',
    ...(body ? { body: JSON.stringify(body) } : {}),
    headers: targetHeaders(target, 'application/json'),
    signal: AbortSignal.timeout(15_000),
    route: target,
  }).catch(unreachable);
  const text = await reply.text(16 * 1024 * 1024).catch(unreachable);
  if (reply.statusCode >= 400) {
    const e = extractUpstreamError(reply.statusCode, text);
    // Some upstreams quote the refused key in their message; the reply and lastError must not carry it whole.
    const message = redactSecrets(formatProviderError(e.code ?? reply.statusCode, e.message), Object.values(c.credential));
    throw new ModelListError(message, classifyFailure({ status: reply.statusCode, code: e.code }));
  }
  try {
    return parseModelList(def.format, JSON.parse(text));
  } catch {
    throw new Error(formatProviderError(reply.statusCode, 'the model list is not JSON'));
  }
}
