/**
 * OpenTelemetry traces from the real daemon to a mock OTLP/HTTP collector (test/observability/otlp-collector.ts):
 * a combo request whose first target fails gives a request span and two attempt spans (failover visible)
 * in the client's trace, with GenAI attributes and cost; content only when opted in; traceparent sent
 * upstream only when allowed; a dead collector leaves proxying working and counts dropped spans.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { script, until } from '../resilience/helpers.js';
import { startCollector, type CollectedSpan, type Collector } from './otlp-collector.js';
import { parseExposition, total } from './exposition.js';

const OTEL_ENV = { OTEL_BSP_SCHEDULE_DELAY: '50' };
let mock: MockUpstream;
let collector: Collector;

beforeAll(async () => {
  mock = await startMockUpstream();
  collector = await startCollector();
});
afterAll(async () => {
  await collector?.close();
  await mock?.close();
});

async function daemon(env: Record<string, string>, home?: string): Promise<{ router: RouterProcess; key: string }> {
  const router = await startRouter({ env, home, keepHome: true });
  const key = await router.createKey();
  if (!home) {
    for (const provider of ['openai', 'groq']) await router.addConnection({ provider, apiKey: `sk-${provider}-secret-value`, providerSpecificData: { baseUrl: mock.openaiBase } });
    const r = await router.manage('POST', '/api/combos', { name: 'fo', strategy: 'priority', models: ['openai/a', 'groq/b'] });
    expect(r.status).toBe(201);
  }
  return { router, key };
}

async function chat(router: RouterProcess, key: string, model: string, headers: Record<string, string> = {}, stream = false) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'the secret word is pelican' }] }),
  });
  return { status: res.status, traceId: res.headers.get('x-router-trace-id')!, text: await res.text() };
}

function traceSpans(traceId: string): CollectedSpan[] {
  return collector.spans.filter((s) => s.traceId === traceId);
}

describe('OTLP trace export', () => {
  let router: RouterProcess;
  let key: string;
  beforeAll(async () => {
    ({ router, key } = await daemon({ ...OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }));
  });
  afterAll(async () => {
    await router?.stop();
  });

  it('a failed-over combo request: request span in the client trace, two attempt spans, GenAI attributes, no content', async () => {
    script(mock, { a: { type: 'status', status: 503 } });
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const r = await chat(router, key, 'fo', { traceparent: `00-${clientTrace}-${clientSpan}-01` });
    expect(r.status, r.text).toBe(200);
    const spans = await until(() => (traceSpans(clientTrace).length >= 3 ? traceSpans(clientTrace) : undefined));
    expect(spans).toHaveLength(3);
    const root = spans.find((s) => s.parentSpanId === clientSpan)!;
    expect(root, JSON.stringify(spans)).toBeDefined();
    expect(root.kind).toBe(2); // SERVER
    expect(root.resource['service.name']).toBe('router');
    const attempts = spans.filter((s) => s.parentSpanId === root.spanId).sort((a, b) => a.startMs - b.startMs);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.response.model': 'a', 'http.response.status_code': 503, 'router.combo': 'fo' });
    expect(attempts[0]!.status.code).toBe(2); // ERROR
    expect(attempts[1]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'groq',
      'gen_ai.request.model': 'fo',
      'gen_ai.response.model': 'b',
      'gen_ai.response.finish_reasons': ['stop'],
      'http.response.status_code': 200,
      'router.combo': 'fo',
    });
    expect(attempts[1]!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(attempts[1]!.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    // groq/b has no price: the span says so (router.cost_source unpriced) and carries no made-up $0 (issue 31).
    expect(attempts[1]!.attributes['router.cost_source']).toBe('unpriced');
    expect('router.cost_usd' in attempts[1]!.attributes).toBe(false);
    expect(attempts[0]!.endMs).toBeLessThanOrEqual(attempts[1]!.startMs + 1);
    expect(root.attributes).toMatchObject({ 'gen_ai.request.model': 'fo', 'gen_ai.response.model': 'b', 'router.trace_id': r.traceId, 'http.response.status_code': 200 });
    expect('router.cost_usd' in root.attributes).toBe(false);
    expect(root.attributes['router.cost_source']).toBe('unpriced');
    expect(JSON.stringify(spans)).not.toContain('pelican');
    expect(JSON.stringify(spans)).not.toContain('gen_ai.output.messages');
    // Propagation is off by default: the upstream saw no traceparent.
    expect(mock.requests.every((q) => q.headers.traceparent === undefined)).toBe(true);
    mock.reset();
  });

  it("without a client traceparent the trace id is the request's X-Router-Trace-Id", async () => {
    script(mock);
    const r = await chat(router, key, 'groq/b');
    expect(r.status).toBe(200);
    const id = r.traceId.replaceAll('-', '');
    const spans = await until(() => (traceSpans(id).length >= 2 ? traceSpans(id) : undefined));
    expect(spans.filter((s) => s.parentSpanId === undefined)).toHaveLength(1);
    mock.reset();
  });
});

describe('content and propagation opt-ins', () => {
  it('otelCaptureContent puts the prompt on the request span; otelPropagateTraceparent sends traceparent upstream', async () => {
    const first = await daemon({ ...OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const patch = await first.router.manage('PATCH', '/api/settings', { otelCaptureContent: true, otelPropagateTraceparent: true });
    expect(patch.status).toBe(200);
    await first.router.stop();
    // Trace settings are read at start.
    const { router, key } = await daemon({ ...OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, first.router.home);
    try {
      script(mock);
      const r = await chat(router, key, 'groq/b');
      expect(r.status).toBe(200);
      const id = r.traceId.replaceAll('-', '');
      const spans = await until(() => (traceSpans(id).length >= 2 ? traceSpans(id) : undefined));
      const root = spans.find((s) => s.parentSpanId === undefined)!;
      expect(String(root.attributes['gen_ai.input.messages'])).toContain('pelican');
      // The completion too, as GenAI output messages: a whole reply and a streamed one.
      expect(JSON.parse(String(root.attributes['gen_ai.output.messages']))).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'served by b' }], finish_reason: 'stop' },
      ]);
      const sent = mock.requests.at(-1)!.headers.traceparent as string;
      expect(sent).toMatch(new RegExp(`^00-${id}-${root.spanId}-01$`));
      const streamed = await chat(router, key, 'groq/b', {}, true);
      expect(streamed.status).toBe(200);
      const sid = streamed.traceId.replaceAll('-', '');
      const sroot = (await until(() => (traceSpans(sid).length >= 2 ? traceSpans(sid) : undefined))).find((s) => s.parentSpanId === undefined)!;
      expect(String(sroot.attributes['gen_ai.output.messages'])).toContain('served by b');
    } finally {
      mock.reset();
      await router.stop();
    }
  });
});

describe('OTLP encodings', () => {
  it('protobuf by default (decoded with the official OTLP classes); http/json when OTEL_EXPORTER_OTLP_PROTOCOL says so', async () => {
    for (const [protocol, encoding] of [[undefined, 'protobuf'], ['http/json', 'json']] as const) {
      const env: Record<string, string> = { ...OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
      if (protocol) env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
      const { router, key } = await daemon(env);
      try {
        script(mock);
        const before = collector.encodings.length;
        const r = await chat(router, key, 'groq/b');
        const id = r.traceId.replaceAll('-', '');
        const spans = await until(() => (traceSpans(id).length >= 2 ? traceSpans(id) : undefined));
        expect(spans.find((s) => s.parentSpanId === undefined)!.attributes['gen_ai.provider.name']).toBe('groq');
        expect(new Set(collector.encodings.slice(before))).toEqual(new Set([encoding]));
      } finally {
        mock.reset();
        await router.stop();
      }
    }
  });
});

describe('a dead collector', () => {
  it('never breaks proxying, and the dropped spans are counted in /metrics', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const { router, key } = await daemon({ ...OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    try {
      script(mock);
      for (let i = 0; i < 10; i++) expect((await chat(router, key, 'groq/b')).status).toBe(200);
      const dropped = await until(async () => {
        const res = await fetch(`${router.url}/metrics`, { headers: { 'x-router-cli-token': router.cliToken } });
        const n = total(parseExposition(await res.text()), 'router_otel_spans_dropped_total');
        return n >= 20 ? n : undefined;
      }, 60_000, 200);
      expect(dropped).toBeGreaterThanOrEqual(20);
    } finally {
      mock.reset();
      await router.stop();
    }
  }, 120_000); // a daemon start, ten requests and the exporter's failed sends: minutes on a loaded machine
});
