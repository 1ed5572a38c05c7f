import { ANTHROPIC_ERROR_STATUS } from '../../translate/formats/anthropic/errors.js';
import type { IrUsage } from '../../translate/ir.js';
import type { EncodeOptions, UpstreamEncodeOptions } from '../../translate/codec.js';
import { getClientCodec, getUpstreamCodec } from '../../translate/registry.js';

/**
 * The native-batch codec: router's batch lines (OpenAI's batch input format) into a provider's own batch
 * (OpenAI `/v1/batches` input JSONL; Anthropic Message Batches `requests`), and the provider's result lines
 * back into OpenAI's batch output lines. Pure: no I/O, no clock, ids from the caller, so every mapping is
 * golden-tested from the providers' documented formats (test/families/batch-native.test.ts). The calls
 * themselves (files, batches, polling, crash recovery) are batches/native.ts's, through the executor.
 */

/** One request of a batch input file (batches/jsonl.ts BatchLine, as this codec reads it). */
export interface NativeLine {
  custom_id: string;
  url: string;
  body: Record<string, unknown> & { model: string };
}

/** One line of router's batch output, mapped from a provider's result. */
export interface NativeResult {
  /** The request succeeded (a 2xx with a body). */
  ok: boolean;
  /** The output line, as written to the batch's output or error file. */
  result: string;
  /** HTTP status of the line (499 for a request that never ran). */
  status: number;
  /** The reply body in OpenAI's format (what the usage row reads), when there is one. */
  body: unknown;
}

/** What OpenAI and Anthropic bill for a batched request, relative to the same request sent on its own. */
export const BATCH_PRICE_FACTOR = 0.5;

const EXPIRED_TEXT = 'This request could not be executed before the completion window expired.';

/** An output line for a request that got no response (OpenAI's batch error line shape). */
export function errorLine(id: string, customId: string, code: string, message: string): string {
  return JSON.stringify({ id, custom_id: customId, response: null, error: { code, message } });
}

/** The non-empty lines of a JSONL text, parsed. */
export function jsonLines(text: string): any[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** Usage of a Chat Completions, Responses or embeddings body (a line's usage row). */
export function lineUsage(body: any): Partial<IrUsage> | undefined {
  const u = body?.usage;
  if (!u || typeof u !== 'object') return undefined;
  return { inputTokens: u.prompt_tokens ?? u.input_tokens ?? 0, outputTokens: u.completion_tokens ?? u.output_tokens ?? 0 };
}

/** OpenAI's batch input file for `lines`, each body's model replaced by the upstream's id for it. */
export function openaiInput(lines: readonly NativeLine[], upstreamModel: (model: string) => string): string {
  const jsonl = lines.map((l) => JSON.stringify({ custom_id: l.custom_id, method: 'POST', url: l.url, body: { ...l.body, model: upstreamModel(l.body.model) } }));
  return `${jsonl.join('\n')}\n`;
}

/**
 * OpenAI's output and error files (their texts, in order) as router's output lines by custom_id. A line
 * OpenAI cancelled because router's own completion window closed (`expired`) is written as expired.
 */
export function openaiResults(files: readonly string[], expired: boolean, newLineId: () => string): Map<string, NativeResult> {
  const out = new Map<string, NativeResult>();
  for (const text of files) {
    for (const r of jsonLines(text)) {
      const status = r.response?.status_code ?? 500;
      const ok = status >= 200 && status < 300 && !r.error;
      const error = r.error?.code === 'batch_cancelled' && expired ? { code: 'batch_expired', message: EXPIRED_TEXT } : (r.error ?? null);
      const result = JSON.stringify({ id: newLineId(), custom_id: r.custom_id, response: r.response ?? null, error });
      out.set(r.custom_id, { ok, result, status, body: r.response?.body });
    }
  }
  return out;
}

/** The `requests` of an Anthropic Message Batch: each Chat Completions line translated to Messages params. */
export function anthropicRequests(lines: readonly NativeLine[], target: (model: string) => { model: string; options: UpstreamEncodeOptions }): Array<{ custom_id: string; params: unknown }> {
  return lines.map((l) => {
    const t = target(l.body.model);
    const ir = getClientCodec('openai-chat').decodeRequest(l.body);
    ir.model = t.model;
    ir.stream = false;
    return { custom_id: l.custom_id, params: getUpstreamCodec('anthropic').encodeRequest(ir, t.options) };
  });
}

/**
 * A Message Batch's results file as router's output lines by custom_id: a succeeded message becomes a Chat
 * Completions body (translated against the line that asked for it; `encode` gives the body's id and clock),
 * an errored one Anthropic's error as OpenAI's error body with Anthropic's status for its type, a canceled or
 * expired one an expired (or, when the client cancelled, cancelled) error line.
 */
export function anthropicResults(
  text: string,
  sent: ReadonlyMap<string, NativeLine>,
  expired: boolean,
  newLineId: () => string,
  encode?: EncodeOptions,
): Map<string, NativeResult> {
  const out = new Map<string, NativeResult>();
  for (const r of jsonLines(text)) {
    const id = r.custom_id as string;
    const result = r.result ?? {};
    if (result.type === 'succeeded') {
      const ir = getUpstreamCodec('anthropic').decodeResponse(result.message);
      const line = sent.get(id);
      const request = getClientCodec('openai-chat').decodeRequest(line ? line.body : { model: result.message?.model ?? 'unknown', messages: [] });
      const body = getClientCodec('openai-chat').encodeResponse(ir, request, encode);
      const mapped = { id: newLineId(), custom_id: id, response: { status_code: 200, request_id: result.message?.id ?? '', body }, error: null };
      out.set(id, { ok: true, result: JSON.stringify(mapped), status: 200, body });
    } else if (result.type === 'errored') {
      const inner = result.error?.error ?? result.error ?? {};
      const status = ANTHROPIC_ERROR_STATUS[inner.type] ?? 500;
      const body = { error: { message: inner.message ?? 'The provider reported an error.', type: inner.type ?? 'api_error', code: inner.type ?? 'api_error' } };
      const mapped = { id: newLineId(), custom_id: id, response: { status_code: status, request_id: result.error?.request_id ?? '', body }, error: null };
      out.set(id, { ok: false, result: JSON.stringify(mapped), status, body });
    } else {
      // Lines router cancelled because its own completion window closed are expired, as OpenAI writes them.
      const isExpired = result.type !== 'canceled' || expired;
      const message = isExpired ? EXPIRED_TEXT : 'The batch was cancelled before this request ran.';
      out.set(id, { ok: false, result: errorLine(newLineId(), id, isExpired ? 'batch_expired' : 'batch_cancelled', message), status: 499, body: undefined });
    }
  }
  return out;
}
