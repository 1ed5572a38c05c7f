/** The inspector's text: metadata, and client/upstream exchanges side by side (pure; no Ink). */
import { cell, int, ms, stamp, cost } from '../format.js';
import type { ExchangeSide, RequestEntry, TraceDetail } from '../types.js';
import { maskBody, maskHeaders } from './state.js';

/** The daemon route the inspector reads bodies from (not served by this daemon version yet). */
export const TRACE_PATH = '/api/logs/traces/';

/** `unavailable` with a reason: the daemon said why this one request has no capture. */
export type DetailState = { kind: 'loading' } | { kind: 'ok'; detail: TraceDetail } | { kind: 'unavailable'; reason?: string } | { kind: 'error'; message: string };

const isSide = (x: unknown): boolean =>
  typeof x === 'object' && x !== null && typeof (x as { headers?: unknown }).headers === 'object' && 'body' in (x as object);

/** A reply of the trace route, checked before it is drawn (an older or newer daemon may send another shape). */
export function isTraceDetail(x: unknown): x is TraceDetail {
  const d = x as TraceDetail;
  return Boolean(d?.client && d.upstream && isSide(d.client.request) && isSide(d.client.response) && isSide(d.upstream.request) && isSide(d.upstream.response));
}

/**
 * A key or connection as people read it: its name; its id when deleted since (null) or when the daemon
 * sent no names (undefined: an older daemon); `-` when unset.
 */
function named(name: string | null | undefined, id: string | null): string {
  if (!id) return '-';
  if (name === undefined) return id;
  return name ?? `${id} (deleted)`;
}

/** Lines of metadata every request has (from the usage record). */
export function metadataLines(e: RequestEntry): string[] {
  const served = `${e.provider}/${e.model}`;
  const lines = [
    `trace      ${e.traceId}`,
    `time       ${stamp(e.timestamp)} UTC`,
    `endpoint   ${e.endpoint}${e.clientFormat ? ` (${e.clientFormat})` : ''}${e.streamed ? ', streamed' : ''}`,
    `model      ${served}${e.requestedModel && e.requestedModel !== served ? `  (asked: ${e.requestedModel})` : ''}${e.combo ? `  combo ${e.combo}` : ''}`,
    `status     ${e.status}${e.finishReason ? `  finish ${e.finishReason}` : ''}`,
    `latency    ${ms(e.latencyMs)} total, ${ms(e.upstreamMs)} upstream`,
    `tokens     ${int(e.tokensIn)} in (cache read ${int(e.cacheReadTokens)}, write ${int(e.cacheWriteTokens)}), ${int(e.tokensOut)} out (reasoning ${int(e.reasoningTokens)})${e.estimated ? ', estimated' : ''}`,
    `cost       ${cost(e.costUsd)}${e.costSource ? ` (${e.costSource}${e.priceVersion ? `, ${e.priceVersion}` : ''})` : ''}`,
    `api key    ${named(e.apiKeyName, e.apiKeyId)}    connection ${named(e.connectionName, e.connectionId)}`,
  ];
  if (e.userAgent) lines.push(`client     ${e.userAgent}`);
  if (e.error) lines.push(`error      ${e.error}`);
  return lines;
}

/** Hard-wraps text to a width (bodies are shown whole, never cut off at the edge). */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let rest = line;
    while (rest.length > width) {
      // Break at the last space that fits, else mid-word (ids and JSON strings have no spaces).
      const space = rest.lastIndexOf(' ', width);
      const at = space > width / 2 ? space : width;
      out.push(rest.slice(0, at));
      rest = rest.slice(at).replace(/^ /, '');
    }
    out.push(rest);
  }
  return out;
}

function sideLines(side: ExchangeSide, width: number): string[] {
  const headers = Object.entries(maskHeaders(side.headers)).map(([k, v]) => `${k}: ${v}`);
  const body = maskBody(side.body);
  return [
    ...headers.flatMap((h) => wrap(h, width)),
    '',
    ...(body === null ? ['(body not recorded)'] : wrap(body, width)),
    ...(side.truncated ? ['… (truncated)'] : []),
  ];
}

/** The exchange part: client (translated) and upstream columns side by side, for the request or the response. */
export function exchangeLines(d: TraceDetail, tab: 'request' | 'response', width: number): string[] {
  const col = Math.max(10, Math.floor((width - 3) / 2));
  const left = sideLines(d.client[tab], col);
  const right = sideLines(d.upstream[tab], col);
  const title = [cell(`client ${tab} (as translated)`, col), ' │ ', cell(`upstream ${tab}${d.upstream.url && tab === 'request' ? ` ${d.upstream.url}` : ''}`, col)].join('');
  const rows = [title, `${'─'.repeat(col)}─┼─${'─'.repeat(col)}`];
  for (let i = 0; i < Math.max(left.length, right.length); i++) rows.push(`${cell(left[i] ?? '', col)} │ ${cell(right[i] ?? '', col)}`);
  return rows;
}

export function detailLines(e: RequestEntry, state: DetailState | undefined, tab: 'request' | 'response', width: number): string[] {
  const lines = metadataLines(e).flatMap((l) => wrap(l, width));
  lines.push('');
  if (!state || state.kind === 'loading') lines.push('loading headers and bodies…');
  else if (state.kind === 'unavailable') {
    const text = state.reason
      ? `Headers and bodies: ${state.reason.replace(/\.?$/, '.')} The fields above are what the live channel and the request log carry.`
      : 'Headers and bodies: not captured for this request (turn capture on with `router settings set captureTraffic true`); the fields above are what the live channel and the request log carry.';
    lines.push(...wrap(text, width));
  } else if (state.kind === 'error') lines.push(...wrap(`Headers and bodies: ${state.message}`, width));
  else lines.push(...exchangeLines(state.detail, tab, width));
  return lines;
}

