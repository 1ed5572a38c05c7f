import { maskSecret, redactSecrets } from '../../shared/mask.js';
import type { SettingsStore } from '../settings/store.js';

const MAX_ENTRIES = 200;
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'x-goog-api-key', 'cookie', 'set-cookie', 'x-router-cli-token']);

export interface ExchangeSide {
  headers: Record<string, string>;
  body: string | null;
  truncated?: boolean;
}

/** One request as the traffic inspector shows it: the client's side next to the upstream's. */
export interface TraceDetail {
  traceId: string;
  at: string;
  client: { request: ExchangeSide; response: ExchangeSide };
  upstream: { url?: string; request: ExchangeSide; response: ExchangeSide };
  /** What request stages noted (the hooks that ran and their tags, guardrail findings...), when any ran. */
  notes?: Record<string, unknown>;
}

type HeaderInput = Headers | Record<string, string | string[] | undefined>;

/** Headers as captured: credentials masked, so a capture can be shown without leaking keys. */
function maskHeaders(input: HeaderInput): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: Array<[string, string | string[] | undefined]> = [];
  if (input instanceof Headers) input.forEach((v, k) => entries.push([k, v]));
  else entries.push(...Object.entries(input));
  for (const [name, raw] of entries) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    out[name.toLowerCase()] = SECRET_HEADERS.has(name.toLowerCase()) ? (maskSecret(value) ?? '') : value;
  }
  return out;
}

const empty = (): ExchangeSide => ({ headers: {}, body: null });

/** A capture being filled while its request runs. Bodies are capped per side (setting captureMaxBodyBytes). */
export class TraceRecorder {
  constructor(
    readonly detail: TraceDetail,
    private readonly secrets: () => string[],
    private readonly maxBody: number,
  ) {}

  private set(side: ExchangeSide, headers: HeaderInput | undefined, body: string | null): void {
    if (headers) side.headers = maskHeaders(headers);
    if (body === null) return;
    const clean = redactSecrets(body, this.secrets());
    side.truncated = clean.length > this.maxBody;
    side.body = side.truncated ? clean.slice(0, this.maxBody) : clean;
  }

  upstreamRequest(url: string, headers: HeaderInput, body: string, credentials: Array<string | undefined>): void {
    this.extra = credentials.filter((c): c is string => typeof c === 'string');
    this.detail.upstream.url = url;
    this.set(this.detail.upstream.request, headers, body);
  }

  upstreamResponse(status: number, headers: HeaderInput | undefined, body: string | null): void {
    this.set(this.detail.upstream.response, headers ? { ...maskHeaders(headers), ':status': String(status) } : { ':status': String(status) }, body);
  }

  clientResponse(status: number, headers: HeaderInput, body: string | null): void {
    this.set(this.detail.client.response, { ...maskHeaders(headers), ':status': String(status) }, body);
  }

  /** Appends streamed text to a side (up to the cap). */
  append(side: 'upstream' | 'client', text: string): void {
    const s = side === 'upstream' ? this.detail.upstream.response : this.detail.client.response;
    const current = s.body ?? '';
    if (current.length >= this.maxBody) {
      s.truncated = true;
      return;
    }
    const clean = redactSecrets(text, this.secrets());
    if (current.length + clean.length > this.maxBody) s.truncated = true;
    s.body = current + clean.slice(0, this.maxBody - current.length);
  }

  extra: string[] = [];
}

/**
 * The traffic inspector's memory: when the `captureTraffic` setting is on, the last 200 proxied requests
 * (refused ones included) with headers (credentials masked) and bodies (`captureMaxBodyBytes` per side,
 * 1 MiB by default: coding agents send 75-120 KB requests). Off by default: capturing costs memory
 * and copies bodies, and request bodies may hold data users do not want kept.
 */
/**
 * A parsed body as text for the capture. Input nested too deeply for JSON.stringify (JSON.parse accepts
 * it; the request itself is then refused with a 400) is noted instead: the capture must never turn a bad
 * request into a 500.
 */
function serialized(body: unknown): string {
  try {
    return JSON.stringify(body) ?? '';
  } catch {
    return '(not captured: the body could not be serialized, e.g. nested too deeply)';
  }
}

export class TrafficCapture {
  private readonly ring = new Map<string, TraceDetail>();
  private readonly recorders = new Map<string, TraceRecorder>();

  constructor(private readonly settings: SettingsStore) {}

  /** Starts a capture for a request, or returns undefined when capturing is off (the fast path). */
  begin(traceId: string, headers: Headers, body: unknown): TraceRecorder | undefined {
    const settings = this.settings.get();
    if (!settings.captureTraffic) return undefined;
    const max = settings.captureMaxBodyBytes;
    const detail: TraceDetail = {
      traceId,
      at: new Date().toISOString(),
      client: { request: empty(), response: empty() },
      upstream: { request: empty(), response: empty() },
    };
    const recorder: TraceRecorder = new TraceRecorder(detail, (): string[] => recorder.extra, max);
    this.recorders.set(traceId, recorder);
    detail.client.request.headers = maskHeaders(headers);
    if (body !== undefined) {
      const text = serialized(body);
      detail.client.request.truncated = text.length > max;
      detail.client.request.body = text.slice(0, max);
    }
    this.ring.set(traceId, detail);
    if (this.ring.size > MAX_ENTRIES) {
      const oldest = this.ring.keys().next().value!;
      this.ring.delete(oldest);
      this.recorders.delete(oldest);
    }
    return recorder;
  }

  /**
   * Records the reply of a request router refused (4xx/5xx of its own, or a failure before any upstream
   * reply reached the client): into the request's capture when it has one, else a capture of its own.
   */
  rejected(traceId: string, headers: Headers, body: unknown, status: number, replyHeaders: Headers, replyBody: string): void {
    const recorder = this.recorders.get(traceId) ?? this.begin(traceId, headers, body);
    recorder?.clientResponse(status, replyHeaders, replyBody);
  }

  get(traceId: string): TraceDetail | undefined {
    return this.ring.get(traceId);
  }
}
