import { createRequire } from 'node:module';
import type { Span, Tracer } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { BasicTracerProvider, IdGenerator, ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logger.js';
import { redactSecrets } from '../../shared/mask.js';
import type { ConnectionStore } from '../providers/connections.js';
import type { IrResponse } from '../translate/ir.js';
import type { UsageRecord } from '../usage/record.js';
import type { UsageService } from '../usage/service.js';

/** Spans waiting for export at most; beyond it new spans are dropped (and counted) rather than queued. */
const MAX_QUEUE = 2048;
/** A request whose reply never got recorded is closed after this long (its entry freed). */
const STALE_MS = 15 * 60_000;
/** Characters of prompt (and of completion) content exported per span when content export is on. */
const MAX_CONTENT = 16_000;

export interface TracingOptions {
  /** OTLP/HTTP traces URL (`.../v1/traces`); undefined: the exporter reads the OTEL_EXPORTER_OTLP_* variables. */
  url?: string;
  /** The body encoding: protobuf (the OTLP default) or JSON. */
  protocol: 'http/protobuf' | 'http/json';
  /** Export prompt content (masked like traffic capture); off by default. */
  captureContent: boolean;
  /** Send a W3C traceparent to upstreams (the request span as parent). */
  propagate: boolean;
  usage: UsageService;
  connections: ConnectionStore;
  label: (providerId: string) => string;
  version: string;
  log: Logger;
  /** Batch delay, ms (default OTEL_BSP_SCHEDULE_DELAY or 1000). */
  scheduleDelayMs?: number;
}

/** What the executor tells tracing when a request begins. */
export interface TraceStart {
  traceId: string;
  endpoint: string;
  /** The model the client named (a `<provider>/<model>` id or a combo). */
  model: string;
  stream: boolean;
  /** The client's W3C traceparent header, when it sent one. */
  traceparent: string | null;
  /** The client's request body (content export only). */
  raw: Record<string, unknown>;
}

interface Open {
  span: Span;
  /** Epoch ms the next attempt span starts at (the request start, then each attempt's end). */
  cursor: number;
  content?: string;
  /** The reply's content (content export only), when the reply is complete. */
  output?: string;
  opened: number;
}

/**
 * The OpenTelemetry SDK, loaded by the first Tracing (trace export on): about 15 MB of memory that a daemon
 * without an OTLP endpoint never carries (issue 33 item 2). Its CommonJS builds are required synchronously,
 * so the daemon's start stays synchronous.
 */
function loadOtel() {
  const require = createRequire(import.meta.url);
  return {
    api: require('@opentelemetry/api') as typeof import('@opentelemetry/api'),
    core: require('@opentelemetry/core') as typeof import('@opentelemetry/core'),
    OTLPJsonExporter: (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter,
    OTLPProtobufExporter: (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter,
    resources: require('@opentelemetry/resources') as typeof import('@opentelemetry/resources'),
    sdk: require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base'),
  };
}
type Otel = ReturnType<typeof loadOtel>;
let otelLoaded: Otel | undefined;
const otel = (): Otel => (otelLoaded ??= loadOtel());

/** Trace ids of router's own requests are their X-Router-Trace-Id (a UUID is 32 hex digits). */
class RouterIdGenerator implements IdGenerator {
  next: string | undefined;
  private readonly random = new (otel().sdk.RandomIdGenerator)();
  generateTraceId = (): string => this.next ?? this.random.generateTraceId();
  generateSpanId = (): string => this.random.generateSpanId();
}

/** Counts spans that never reached the collector: queue full, or an export that failed. */
class CountingExporter implements SpanExporter {
  dropped = 0;
  pending = 0;
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.inner.export(spans, (r) => {
      this.pending -= spans.length;
      if (r.code !== otel().core.ExportResultCode.SUCCESS) this.dropped += spans.length;
      done(r);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** A batch processor that refuses spans beyond MAX_QUEUE waiting for export, counting them. */
class BoundedProcessor implements SpanProcessor {
  constructor(
    private readonly inner: SpanProcessor,
    private readonly exporter: CountingExporter,
  ) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    if (this.exporter.pending >= MAX_QUEUE) {
      this.exporter.dropped++;
      return;
    }
    this.exporter.pending++;
    this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** `gen_ai.operation.name` of a route. */
function operation(endpoint: string): string {
  if (endpoint.endsWith('/embeddings')) return 'embeddings';
  if (endpoint.endsWith('/completions') && !endpoint.endsWith('/chat/completions')) return 'text_completion';
  return 'chat';
}

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (protobuf or JSON) in batches. One span per client request, begun by
 * the executor (the client's traceparent honoured), and one child span per upstream attempt, built from
 * the attempt's usage record when it is committed: GenAI semantic-convention attributes plus router's own.
 * Exists only when an endpoint is configured; otherwise the hooks are a property check.
 */
export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly ids: RouterIdGenerator;
  private readonly exporter: CountingExporter;
  private readonly open = new Map<string, Open>();
  /** Requests served, whose span ends at the next turn (content export: the stream's completion comes then). */
  private readonly ending = new Map<string, Open>();
  private readonly unsubscribe: () => void;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly opts: TracingOptions) {
    const { OTLPJsonExporter, OTLPProtobufExporter, sdk, resources } = otel();
    const { BatchSpanProcessor, BasicTracerProvider } = sdk;
    const resourceFromAttributes = resources.resourceFromAttributes;
    this.ids = new RouterIdGenerator();
    const config = opts.url ? { url: opts.url } : {};
    this.exporter = new CountingExporter(opts.protocol === 'http/json' ? new OTLPJsonExporter(config) : new OTLPProtobufExporter(config));
    const batch = new BatchSpanProcessor(this.exporter, { maxQueueSize: MAX_QUEUE, scheduledDelayMillis: opts.scheduleDelayMs });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'router', 'service.version': opts.version }),
      idGenerator: this.ids,
      spanProcessors: [new BoundedProcessor(batch, this.exporter)],
    });
    this.tracer = this.provider.getTracer('router', opts.version);
    this.unsubscribe = opts.usage.onRecord((rec) => this.attempt(rec));
    this.sweep = setInterval(() => this.closeStale(), 60_000);
    this.sweep.unref();
  }

  /** Spans dropped so far (queue full or failed exports), for /metrics. */
  get dropped(): number {
    return this.exporter.dropped;
  }

  get propagates(): boolean {
    return this.opts.propagate;
  }

  /** Whether prompt and completion content are exported (the content stage runs only then). */
  get capturesContent(): boolean {
    return this.opts.captureContent;
  }

  /**
   * A reply is complete (content export only): its content goes on the request span. A non-streamed reply
   * completes before its usage record; a stream right after it, in the same turn (see `attempt`).
   */
  completion(traceId: string, response: IrResponse): void {
    const o = this.open.get(traceId) ?? this.ending.get(traceId);
    if (o) o.output = outputOf(response);
  }

  /** A client request begins: its span starts, as a child of the client's traceparent when valid. */
  begin(s: TraceStart): void {
    const { api, core } = otel();
    const { trace, context, SpanKind } = api;
    const remote = s.traceparent ? core.parseTraceParent(s.traceparent) : null;
    const parent = remote ? trace.setSpanContext(context.active(), remote) : context.active();
    this.ids.next = remote ? undefined : s.traceId.replaceAll('-', '');
    const span = this.tracer.startSpan(
      `${operation(s.endpoint)} ${s.model}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'gen_ai.operation.name': operation(s.endpoint),
          'gen_ai.request.model': s.model,
          'http.route': s.endpoint,
          'router.trace_id': s.traceId,
          'router.stream': s.stream,
        },
      },
      parent,
    );
    this.ids.next = undefined;
    const entry: Open = { span, cursor: Date.now(), opened: Date.now() };
    if (this.opts.captureContent) entry.content = contentOf(s.raw);
    this.open.set(s.traceId, entry);
  }

  /** The W3C traceparent to send upstream for a request (its span as parent); undefined when not propagating. */
  traceparent(traceId: string): string | undefined {
    if (!this.opts.propagate) return undefined;
    const ctx = this.open.get(traceId)?.span.spanContext();
    return ctx ? `00-${ctx.traceId}-${ctx.spanId}-0${ctx.traceFlags.toString(16)}` : undefined;
  }

  /**
   * The executor is done with a request. A failure ends its span now (its attempts were recorded
   * before); a success ends it with the attempt's record, which for a stream comes at its end.
   */
  settle(traceId: string, failed: { status: number; message: string } | undefined): void {
    if (!failed) return;
    const o = this.open.get(traceId);
    if (!o) return;
    this.open.delete(traceId);
    o.span.setAttribute('http.response.status_code', failed.status);
    o.span.setStatus({ code: otel().api.SpanStatusCode.ERROR, message: failed.message.slice(0, 500) });
    o.span.end();
  }

  /** Flushes pending spans and stops exporting. */
  async close(): Promise<void> {
    this.unsubscribe();
    clearInterval(this.sweep);
    for (const o of [...this.open.values(), ...this.ending.values()]) o.span.end();
    this.open.clear();
    this.ending.clear();
    await this.provider.shutdown().catch(() => {});
  }

  /** One upstream attempt, from its usage record: a child span of the request's. */
  private attempt(rec: UsageRecord): void {
    const o = this.open.get(rec.traceId);
    if (!o) return;
    const start = Math.min(o.cursor, rec.ts);
    const provider = this.opts.label(rec.provider);
    const attrs: Record<string, string | number | boolean | string[]> = {
      'gen_ai.operation.name': operation(rec.endpoint),
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': rec.requestedModel ?? rec.model,
      'gen_ai.response.model': rec.model,
      'gen_ai.usage.input_tokens': rec.tokensIn,
      'gen_ai.usage.output_tokens': rec.tokensOut,
      'http.response.status_code': rec.status,
      'router.cost_source': rec.costSource ?? 'unpriced',
      'router.estimated_tokens': rec.estimated,
      'router.streamed': rec.streamed,
    };
    if (rec.costUsd !== null) attrs['router.cost_usd'] = rec.costUsd;
    if (rec.finishReason) attrs['gen_ai.response.finish_reasons'] = [rec.finishReason];
    if (rec.combo) attrs['router.combo'] = rec.combo;
    if (rec.connectionId) attrs['router.account'] = rec.connectionId;
    if (rec.upstreamMs !== null) attrs['router.upstream_ms'] = rec.upstreamMs;
    addNotes(attrs, rec.notes);
    const { trace, context, SpanKind, SpanStatusCode } = otel().api;
    const span = this.tracer.startSpan(`attempt ${provider}/${rec.model}`, { kind: SpanKind.CLIENT, startTime: start, attributes: attrs }, trace.setSpan(context.active(), o.span));
    if (rec.error) span.setStatus({ code: SpanStatusCode.ERROR, message: rec.error.slice(0, 500) });
    span.end(rec.ts);
    o.cursor = rec.ts;
    if (rec.status >= 400) return;
    // The served attempt completes the request: its figures go on the request span too.
    this.open.delete(rec.traceId);
    const { span: root } = o;
    for (const k of ['gen_ai.provider.name', 'gen_ai.response.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gen_ai.response.finish_reasons', 'router.cost_usd', 'router.cost_source', 'router.combo', 'router.cache_hit', 'router.guardrails'] as const) {
      if (attrs[k] !== undefined) root.setAttribute(k, attrs[k]!);
    }
    root.setAttribute('http.response.status_code', rec.status);
    if (o.content === undefined) {
      root.end(rec.ts);
      return;
    }
    root.setAttribute('gen_ai.input.messages', this.mask(o.content, rec.connectionId));
    // A streamed reply's completion is handed over right after its usage record: end the span a turn later.
    this.ending.set(rec.traceId, o);
    setImmediate(() => {
      this.ending.delete(rec.traceId);
      if (o.output !== undefined) root.setAttribute('gen_ai.output.messages', this.mask(o.output, rec.connectionId));
      root.end(rec.ts);
    });
  }

  /** Content as traffic capture keeps it: the serving account's credentials masked wherever they appear. */
  private mask(text: string, connectionId: string | null): string {
    const conn = connectionId ? this.opts.connections.get(connectionId) : undefined;
    return conn ? redactSecrets(text, Object.values(conn.credential ?? {}).filter((v): v is string => typeof v === 'string')) : text;
  }

  private closeStale(): void {
    const cutoff = Date.now() - STALE_MS;
    for (const [id, o] of this.open) {
      if (o.opened > cutoff) continue;
      this.open.delete(id);
      o.span.end();
    }
  }
}

/** Prompt content of a request body in any client format (messages, input, contents, prompt), capped. */
function contentOf(raw: Record<string, unknown>): string {
  const pick = raw.messages ?? raw.input ?? raw.contents ?? raw.prompt;
  const system = raw.system ?? raw.instructions ?? raw.systemInstruction;
  let text: string;
  try {
    text = JSON.stringify(system === undefined ? pick : { system, messages: pick }) ?? '';
  } catch {
    text = '';
  }
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}...` : text;
}

/** A reply as GenAI `gen_ai.output.messages` JSON (text and tool calls), capped. */
function outputOf(res: IrResponse): string {
  const parts: Array<Record<string, string>> = [];
  for (const p of res.parts) {
    if (p.type === 'text' || p.type === 'refusal') parts.push({ type: 'text', content: p.text });
    else if (p.type === 'tool_call') parts.push({ type: 'tool_call', name: p.name, arguments: p.arguments });
  }
  const text = JSON.stringify([{ role: 'assistant', parts, finish_reason: res.finishReason ?? null }]);
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}...` : text;
}

/** Stage notes worth an attribute: a cache hit, guardrail findings. */
function addNotes(attrs: Record<string, string | number | boolean | string[]>, notes: string | null): void {
  if (!notes) return;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(notes) as Record<string, unknown>;
  } catch {
    return;
  }
  if (parsed.cacheHit === true) attrs['router.cache_hit'] = true;
  // Guardrail findings per direction (counts per guardrail, kind and action), as the request log keeps them.
  if (parsed.guardrails !== undefined) attrs['router.guardrails'] = JSON.stringify(parsed.guardrails).slice(0, 2000);
}
