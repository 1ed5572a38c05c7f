import type { ExchangeSide, TraceRecorder } from '../inspect/capture.js';
import type { SettingsStore } from '../settings/store.js';

/** One translation as `GET /api/translator/history` shows it: both formats, both shapes of request and reply. */
export interface TranslationEntry {
  /** Increasing per daemon run; the paging cursor. */
  id: number;
  traceId: string;
  at: string;
  endpoint: string;
  clientFormat: string;
  upstreamFormat: string;
  /** True when the request went through as the client sent it (same format; only the model rewritten). */
  passthrough: boolean;
  provider: string;
  model: string;
  stream: boolean;
  /** The upstream's HTTP status for this attempt. */
  status: number;
  /**
   * What the upstream did not get: fields the target format cannot express (the codecs' notes), or, on
   * passthrough, client fields removed for that provider.
   */
  dropped: string[];
  /** Headers and bodies as the traffic capture holds them (credentials masked, bodies capped). */
  client: { request: ExchangeSide; response: ExchangeSide };
  upstream: { request: ExchangeSide; response: ExchangeSide };
}

export type TranslationInput = Omit<TranslationEntry, 'id' | 'at' | 'traceId' | 'client' | 'upstream'>;

/**
 * The translator's debugging memory: the last `translatorHistorySize` translations (setting; 100 by
 * default, at most 200), recorded only while traffic capture (`captureTraffic`) is on, since it shows the
 * same bodies. Entries point at the capture's own (masked, capped) sides, so keeping them copies nothing;
 * with capture off the proxy never calls in here.
 */
export class TranslatorHistory {
  private readonly ring: TranslationEntry[] = [];
  private nextId = 1;

  constructor(private readonly settings: SettingsStore) {}

  /**
   * Records the attempt `capture` holds now. A successful reply keeps pointing at the capture's live sides
   * (a stream keeps filling them); a failed attempt keeps a copy, as the next target overwrites them.
   */
  record(capture: TraceRecorder, input: TranslationInput): void {
    const size = this.settings.get().translatorHistorySize;
    if (size <= 0) return;
    const d = capture.detail;
    const live = input.status < 400;
    const side = (s: ExchangeSide): ExchangeSide => (live ? s : { ...s });
    this.ring.push({
      id: this.nextId++,
      traceId: d.traceId,
      at: new Date().toISOString(),
      ...input,
      client: { request: d.client.request, response: side(d.client.response) },
      upstream: { request: { ...d.upstream.request }, response: side(d.upstream.response) },
    });
    if (this.ring.length > size) this.ring.splice(0, this.ring.length - size);
  }

  /** Newest first, filtered; `before` is an id from a previous page. */
  list(q: { limit: number; before?: number; clientFormat?: string; upstreamFormat?: string; traceId?: string; translated?: boolean }): {
    entries: TranslationEntry[];
    nextCursor: string | null;
  } {
    const out: TranslationEntry[] = [];
    let more = false;
    for (let i = this.ring.length - 1; i >= 0; i--) {
      const e = this.ring[i]!;
      if (q.before !== undefined && e.id >= q.before) continue;
      if (q.clientFormat && e.clientFormat !== q.clientFormat) continue;
      if (q.upstreamFormat && e.upstreamFormat !== q.upstreamFormat) continue;
      if (q.traceId && e.traceId !== q.traceId) continue;
      if (q.translated !== undefined && e.passthrough === q.translated) continue;
      if (out.length === q.limit) {
        more = true;
        break;
      }
      out.push(e);
    }
    return { entries: out, nextCursor: more ? String(out[out.length - 1]!.id) : null };
  }

  /** Entries held now. */
  get size(): number {
    return this.ring.length;
  }

  clear(): void {
    this.ring.length = 0;
  }
}
