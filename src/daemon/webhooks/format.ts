import type { AnyRouterEvent } from '../events/types.js';
import type { WebhookKind } from './store.js';

/**
 * Per-kind payloads. `custom` receives the spec body `{event, timestamp, data}`; the chat kinds receive
 * their services' incoming-webhook shapes with a one-line human summary, because Slack, Discord and
 * Telegram reject (or show raw) anything else:
 * - slack: `{text}` (Slack incoming webhooks);
 * - discord: `{content}` (Discord "execute webhook"; content is capped at 2000 characters);
 * - telegram: `{chat_id, text}` posted to `<api base>/bot<token>/sendMessage` (text capped at 4096).
 */

/** Default Telegram Bot API base; overridable with env ROUTER_TELEGRAM_API_BASE (tests, proxies). */
export const TELEGRAM_API_BASE = 'https://api.telegram.org';

const DISCORD_MAX = 2000;
const TELEGRAM_MAX = 4096;

/** What to POST for one webhook and event. */
export interface OutboundPayload {
  url: string;
  body: string;
}

/** Thrown when a payload cannot be built (a telegram webhook without a bot token). */
export class PayloadError extends Error {
  override name = 'PayloadError';
}

/** Builds the URL and raw body for a webhook of `kind`. */
export function buildPayload(
  kind: WebhookKind,
  url: string,
  event: AnyRouterEvent,
  telegram: { botToken: string; apiBase: string },
): OutboundPayload {
  switch (kind) {
    case 'custom':
      return { url, body: JSON.stringify({ event: event.event, timestamp: event.timestamp, data: event.data }) };
    case 'slack':
      return { url, body: JSON.stringify({ text: summarize(event) }) };
    case 'discord':
      return { url, body: JSON.stringify({ content: cap(summarize(event), DISCORD_MAX) }) };
    case 'telegram': {
      if (!telegram.botToken) throw new PayloadError('telegramBotToken is not set (PATCH /api/settings)');
      const base = telegram.apiBase.replace(/\/+$/, '');
      return {
        url: `${base}/bot${telegram.botToken}/sendMessage`,
        body: JSON.stringify({ chat_id: url, text: cap(summarize(event), TELEGRAM_MAX) }),
      };
    }
  }
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

const usd = (n: number) => `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 6 : 4)}`;

/** A one-line readable summary of an event, as chat messages show it. */
export function summarize(ev: AnyRouterEvent): string {
  try {
    return describe(ev);
  } catch {
    // An emitter sent data missing a field the sentence needs: the raw data still informs the reader.
    return `[router] ${ev.event}: ${JSON.stringify(ev.data)}`;
  }
}

function describe(ev: AnyRouterEvent): string {
  const head = `[router] ${ev.event}`;
  switch (ev.event) {
    case 'request.completed': {
      const d = ev.data;
      return `${head}: ${d.provider}/${d.model} -> ${d.status}, ${d.tokens_in} in / ${d.tokens_out} out tokens, ${d.cost_usd === null ? 'unpriced' : usd(d.cost_usd)} (trace ${d.trace_id})`;
    }
    case 'request.failed': {
      const d = ev.data;
      return `${head}: ${d.model} -> ${d.status} ${d.error_code}: ${d.error_message} (${d.attempts} attempts, trace ${d.trace_id})`;
    }
    case 'provider.error': {
      const d = ev.data;
      return `${head}: ${d.provider} returned ${d.status}; ${d.consecutive_failures} consecutive failures, circuit ${d.circuit_state}`;
    }
    case 'provider.recovered': {
      const d = ev.data;
      const down = d.downtime_seconds === null ? '' : ` after ${d.downtime_seconds}s`;
      return `${head}: ${d.provider} is healthy again${down} (circuit ${d.previous_state} -> ${d.circuit_state})`;
    }
    case 'quota.exceeded': {
      const d = ev.data;
      const window = d.window ? ` per ${d.window}` : '';
      return `${head}: key ${d.api_key_id} used ${d.used} of ${d.limit} ${d.quota}${window} (${d.scope})`;
    }
    case 'combo.switched': {
      const d = ev.data;
      return `${head}: combo ${d.combo} switched ${d.from ?? '(none)'} -> ${d.to} (${d.reason})`;
    }
    case 'batch.completed':
    case 'batch.failed':
    case 'batch.cancelled': {
      const d = ev.data;
      return `${head}: batch ${d.batch_id} (${d.endpoint}, ${d.mode}) ${d.status}: ${d.completed} of ${d.total} succeeded, ${d.failed} failed`;
    }
    case 'test.ping':
      return `${head}: ${ev.data.message} (webhook ${ev.data.webhookId})`;
    case 'connection.refreshed': {
      const d = ev.data;
      return `${head}: ${d.provider} account ${d.name} has a new token${d.rotated ? ' (refresh token rotated)' : ''}, valid until ${d.expires_at ?? 'unknown'}`;
    }
    case 'connection.expired':
      return `${head}: ${ev.data.provider} account ${ev.data.name} expired and was deactivated: ${ev.data.reason}`;
    case 'model.mismatch': {
      const d = ev.data;
      return `${head}: ${d.provider} was asked for ${d.model} and answered as ${d.served_model} (trace ${d.trace_id})`;
    }
  }
}
