/**
 * The TUI views under ink-testing-library, fed by a fake source (management replies and live messages
 * by hand): what they render, the keys, the filters, selection, and that every frame fits the size given
 * (80x24 leaves 23 lines) and reflows when the size changes.
 */
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../src/cli/tui/app.js';
import { Dashboard, POLL } from '../../src/cli/tui/dashboard.js';
import { InspectView } from '../../src/cli/tui/inspect.js';
import { LogsView } from '../../src/cli/tui/logs.js';
import type { FeedState, TuiSource } from '../../src/cli/tui/source.js';
import { UsageView } from '../../src/cli/tui/usage.js';
import type { LiveMessage, LiveRequest, TraceDetail } from '../../src/cli/types.js';

// eslint-disable-next-line no-control-regex
const strip = (s: string | undefined) => (s ?? '').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

/**
 * The frame once it satisfies `want` (polled: React commits asynchronously, and a loaded machine can be
 * slow); fails with the last frame after 3 s. It always yields first: a frame can be drawn synchronously
 * inside `stdin.write`, before the new view's key listener is attached (React runs effects after the
 * paint), and a key sent in that instant would reach nobody; no person types that fast.
 */
async function frame(ui: { lastFrame: () => string | undefined }, want: RegExp | string | ((f: string) => boolean), ms = 3_000): Promise<string> {
  const ok = typeof want === 'function' ? want : (f: string) => (typeof want === 'string' ? f.includes(want) : want.test(f));
  const deadline = Date.now() + ms;
  for (;;) {
    await tick(10);
    const f = strip(ui.lastFrame());
    if (ok(f)) return f;
    if (Date.now() > deadline) throw new Error(`the frame never showed ${String(want)}:\n${f}`);
  }
}
const KEY = { up: '\u001b[A', down: '\u001b[B', enter: '\r', esc: '\u001b', tab: '\t' };

class FakeSource implements TuiSource {
  url = 'http://127.0.0.1:20128';
  calls: string[] = [];
  private listeners = new Set<(m: LiveMessage) => void>();
  private stateListeners = new Set<(s: FeedState, detail?: string, reconnected?: boolean) => void>();
  constructor(public routes: Array<[string, unknown | ((path: string) => unknown)]> = []) {}
  async get<T>(path: string): Promise<T> {
    this.calls.push(path);
    const bare = path.split('?')[0];
    for (const [prefix, v] of this.routes) if (bare === prefix || (/[/?=]$/.test(prefix) && path.startsWith(prefix)) || (prefix.includes('?') && path.startsWith(prefix))) return (typeof v === 'function' ? (v as (p: string) => unknown)(path) : v) as T;
    throw new Error(`the daemon has no route GET ${path.split('?')[0]} (404); is it older than this CLI (0.1.0)? Try \`router restart\`.`);
  }
  async post<T>(): Promise<T> {
    return {} as T;
  }
  subscribe(onMessage: (m: LiveMessage) => void, onState?: (s: FeedState, detail?: string, reconnected?: boolean) => void) {
    this.listeners.add(onMessage);
    if (onState) this.stateListeners.add(onState);
    onState?.('open');
    return () => {
      this.listeners.delete(onMessage);
      if (onState) this.stateListeners.delete(onState);
    };
  }
  /** The live channel drops and comes back (a daemon restart). */
  reconnect() {
    for (const l of this.stateListeners) l('reconnecting', 'the live channel closed (code 1006); retrying');
    for (const l of this.stateListeners) l('open', undefined, true);
  }
  emit(m: LiveMessage) {
    for (const l of this.listeners) l(m);
  }
  count(prefix: string) {
    return this.calls.filter((c) => c.startsWith(prefix)).length;
  }
}

let seq = 0;
function req(over: Partial<LiveRequest> = {}): LiveRequest {
  seq++;
  return {
    type: 'request',
    timestamp: `2025-06-01T12:00:${String(seq % 60).padStart(2, '0')}.000Z`,
    traceId: `trace-${seq}`,
    apiKeyId: 'key-1',
    endpoint: '/v1/chat/completions',
    clientFormat: 'openai-chat',
    provider: 'openai',
    model: 'gpt-4o-mini',
    requestedModel: 'openai/gpt-4o-mini',
    connectionId: 'conn-1',
    combo: null,
    status: 200,
    latencyMs: 120,
    upstreamMs: 100,
    tokensIn: 1200,
    tokensOut: 340,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.0012,
    streamed: false,
    estimated: false,
    finishReason: 'stop',
    error: null,
    userAgent: 'OpenAI/JS 6.1.0',
    forwardedFor: null,
    ...over,
  } as LiveRequest;
}

/** Log rows come newest first, with ids. */
const logRows = (list: LiveRequest[]) => [...list].reverse().map(({ type: _t, ...e }, i) => ({ ...e, id: list.length - i }));

/** Every line of a frame fits the width and the frame fits the height. */
function expectFits(frame: string, width: number, height: number) {
  const lines = strip(frame).split('\n');
  expect(lines.length).toBeLessThanOrEqual(height);
  for (const l of lines) expect(l.length, JSON.stringify(l)).toBeLessThanOrEqual(width);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LogsView', () => {
  const history = [req({ provider: 'anthropic', model: 'claude-haiku-4-5', requestedModel: 'fast' }), req(), req({ status: 502, error: 'upstream failed', model: 'gpt-4.1' })];

  it('renders the history oldest first, then live requests; fits 80x24', async () => {
    const src = new FakeSource([['/api/logs', { logs: logRows(history), nextCursor: null }]]);
    const ui = render(<LogsView source={src} width={80} height={23} onQuit={() => {}} />);
    let f = await frame(ui, /router logs · all requests\s+3 shown {2}● live/);
    expect(f).toMatch(/TIME\s+ST\s+MODEL\s+IN\s+OUT\s+COST\s+LATENCY/);
    const rows = f.split('\n').filter((l) => /^\d\d:\d\d:\d\d /.test(l));
    expect(rows.map((l) => l.split(/\s+/).slice(1, 3))).toEqual([
      ['200', 'anthropic/claude-haiku-4-5'],
      ['200', 'openai/gpt-4o-mini'],
      ['502', 'openai/gpt-4.1'],
    ]);
    expect(rows[1]).toMatch(/1\.2k\s+340\s+\$0\.0012\s+120ms$/);
    src.emit(req({ model: 'gpt-5' }));
    f = await frame(ui, '4 shown');
    expect(f.split('\n').filter((l) => /^\d\d:/.test(l)).at(-1)).toMatch(/openai\/gpt-5/);
    expectFits(ui.lastFrame()!, 80, 23);
    expect(src.calls[0]).toBe('/api/logs?limit=200');
  });

  it('filters: p cycles providers, s cycles status classes, c clears; an initial filter is applied', async () => {
    const src = new FakeSource([['/api/logs', { logs: logRows(history), nextCursor: null }]]);
    const ui = render(<LogsView source={src} width={80} height={23} onQuit={() => {}} />);
    await frame(ui, '3 shown');
    ui.stdin.write('p');
    await frame(ui, /provider=anthropic\s+1 shown/);
    ui.stdin.write('p');
    await frame(ui, /provider=openai\s+2 shown/);
    ui.stdin.write('s');
    await frame(ui, /provider=openai status=2xx\s+1 shown/);
    ui.stdin.write('s');
    ui.stdin.write('s');
    await frame(ui, /status=5xx\s+1 shown/);
    ui.stdin.write('c');
    await frame(ui, /all requests\s+3 shown/);

    const errorsOnly = render(<LogsView source={src} width={80} height={23} initialFilter={{ status: 'error' }} onQuit={() => {}} />);
    await frame(errorsOnly, /status=error\s+1 shown/);
    expect(src.calls.at(-1)).toBe('/api/logs?limit=200&status=error');
  });

  it('space pauses (new requests are counted, not shown) and resumes', async () => {
    const src = new FakeSource([['/api/logs', { logs: [], nextCursor: null }]]);
    const ui = render(<LogsView source={src} width={80} height={23} onQuit={() => {}} />);
    await frame(ui, 'waiting for requests…');
    src.emit(req());
    await frame(ui, /1 shown {2}●/);
    ui.stdin.write(' ');
    await frame(ui, '· paused');
    src.emit(req());
    src.emit(req());
    await frame(ui, /1 shown · paused \(\+2\)/);
    ui.stdin.write(' ');
    await frame(ui, /3 shown {2}●/);
  });

  it('esc goes back when opened from the dashboard, q quits; wider terminals get an error column', async () => {
    const onBack = vi.fn();
    const onQuit = vi.fn();
    const src = new FakeSource([['/api/logs', { logs: logRows(history), nextCursor: null }]]);
    const ui = render(<LogsView source={src} width={120} height={23} onBack={onBack} onQuit={onQuit} />);
    await frame(ui, /502 openai\/gpt-4\.1 .* upstream failed/);
    expect(strip(ui.lastFrame())).toMatch(/LATENCY ERROR \/ VIA/);
    expect(strip(ui.lastFrame())).toMatch(/502 openai\/gpt-4\.1 .* upstream failed/);
    expect(strip(ui.lastFrame())).toMatch(/via fast/);
    expectFits(ui.lastFrame()!, 120, 23);
    ui.stdin.write(KEY.esc);
    await frame(ui, () => onBack.mock.calls.length === 1);
    expect(onBack).toHaveBeenCalledTimes(1);
    ui.stdin.write('q');
    expect(onQuit).toHaveBeenCalledTimes(1);
  });

  it('keeps only the rows that fit and scrolls with the arrows', async () => {
    const many = Array.from({ length: 40 }, (_, i) => req({ model: `m-${i}` }));
    const src = new FakeSource([['/api/logs', { logs: logRows(many), nextCursor: null }]]);
    const ui = render(<LogsView source={src} width={80} height={10} onQuit={() => {}} />);
    await frame(ui, 'openai/m-39');
    let rows = strip(ui.lastFrame()).split('\n').filter((l) => /^\d\d:/.test(l));
    expect(rows).toHaveLength(7);
    expect(rows.at(-1)).toContain('openai/m-39');
    ui.stdin.write(KEY.up);
    ui.stdin.write(KEY.up);
    await frame(ui, (f) => f.includes('scrolled') && !f.includes('openai/m-39'));
    rows = strip(ui.lastFrame()).split('\n').filter((l) => /^\d\d:/.test(l));
    expect(rows.at(-1)).toContain('openai/m-37');
    expect(strip(ui.lastFrame())).toContain('scrolled');
    expectFits(ui.lastFrame()!, 80, 10);
  });
});

describe('UsageView', () => {
  const now = Date.parse('2025-06-01T12:30:30.000Z');
  const minute = (m: number) => new Date(Date.parse('2025-06-01T12:00:00.000Z') + m * 60_000).toISOString();
  const totals = (requests: number, errors: number, tokens: number, costUsd: number) => ({ requests, errors, tokens: { input: tokens, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: tokens }, costUsd, avgLatencyMs: 100 });
  const points = (counts: Record<number, number>) => Array.from({ length: 31 }, (_, m) => ({ t: minute(m), requests: counts[m] ?? 0, errors: 0, tokensIn: (counts[m] ?? 0) * 10, tokensOut: 0, costUsd: 0 }));
  const routes = (): Array<[string, unknown]> => [
    ['/api/usage/breakdown?by=provider', { rows: [{ key: 'openai', ...totals(30, 1, 30_000, 0.3) }, { key: 'anthropic', ...totals(5, 0, 9_000, 0.9) }] }],
    ['/api/usage/breakdown?by=model', { rows: [{ key: 'openai/gpt-4o-mini', ...totals(30, 1, 30_000, 0.3) }, { key: 'anthropic/claude-haiku-4-5', ...totals(5, 0, 9_000, 0.9) }] }],
    ['/api/usage/timeseries?bucket=minute&from=', (p: string) => ({ points: p.includes('provider=anthropic') || p.includes('model=anthropic') ? points({ 29: 5 }) : points({ 20: 10, 25: 5, 30: 15 }) })],
  ];

  it('shows totals and per-provider rows with sparklines; live requests add to them', async () => {
    const src = new FakeSource(routes());
    const ui = render(<UsageView source={src} width={80} height={23} now={now} onQuit={() => {}} />);
    let f = await frame(ui, /router usage · since 11:30:30 UTC/);
    expect(f).toMatch(/requests 35 {2}errors 1 {2}tokens 39k {2}cost \$1\.20/);
    expect(f).toMatch(/NAME\s+REQ\s+ERR\s+TOKENS\s+COST per minute, last \d+ min/);
    const openai = f.split('\n').find((l) => l.startsWith('openai'))!;
    expect(openai).toMatch(/^openai\s+30\s+1\s+30k\s+\$0\.3000 .*[▁▂▃▄▅▆▇█]+$/);
    expect(openai.endsWith('█')).toBe(true);
    // Ranked by requests: openai first.
    expect(f.indexOf('openai ')).toBeLessThan(f.indexOf('anthropic '));
    src.emit(req({ timestamp: new Date(now).toISOString(), provider: 'anthropic', model: 'claude-haiku-4-5', tokensIn: 1000, tokensOut: 0, costUsd: 0.1 }));
    src.emit({ type: 'status', timestamp: '', version: '0.1.0', uptimeSeconds: 5, requestsPerSecond: 0.5, inFlight: 0, openStreams: 0, liveClients: 1, usageQueue: { queued: 0, dropped: 0, estimating: 0 } });
    f = await frame(ui, /requests 36 .* cost \$1\.30 {2}rate 0\.5\/s/);
    expect(f.split('\n').find((l) => l.startsWith('anthropic'))).toMatch(/^anthropic\s+6\s+0\s+10k\s+\$1\.00 /);
    expectFits(ui.lastFrame()!, 80, 23);
    // History per group was fetched once, with provider and model filters; nothing is polled.
    expect(src.count('/api/usage/timeseries')).toBe(5);
  });

  it('unpriced requests (seeded and live) are named, never added as $0', async () => {
    const src = new FakeSource([
      ['/api/usage/breakdown?by=provider', { rows: [{ key: 'openai', ...totals(30, 1, 30_000, 0.3), unpricedRequests: 2 }] }],
      ['/api/usage/breakdown?by=model', { rows: [{ key: 'openai/gpt-4o-mini', ...totals(30, 1, 30_000, 0.3), unpricedRequests: 2 }] }],
      ['/api/usage/timeseries?bucket=minute&from=', () => ({ points: points({ 20: 30 }) })],
    ]);
    const ui = render(<UsageView source={src} width={100} height={23} now={now} onQuit={() => {}} />);
    await frame(ui, /cost \$0\.3000 \(2 requests unpriced\)/);
    src.emit(req({ timestamp: new Date(now).toISOString(), provider: 'local', model: 'my-ft', tokensIn: 10, tokensOut: 5, costUsd: null }));
    const f = await frame(ui, /cost \$0\.3000 \(3 requests unpriced\)/);
    expect(f.split('\n').find((l) => l.startsWith('local'))).toMatch(/^local\s+1\s+0\s+15\s+unpriced /);
  });

  it('g switches between providers and models, t between requests, tokens and cost', async () => {
    const src = new FakeSource(routes());
    const ui = render(<UsageView source={src} width={100} height={23} now={now} onQuit={() => {}} />);
    await frame(ui, /^openai\s+30/m);
    ui.stdin.write('g');
    let f = await frame(ui, 'by model · sparklines show requests');
    expect(f).toMatch(/^openai\/gpt-4o-mini\s+30/m);
    ui.stdin.write('t');
    f = await frame(ui, 'sparklines show tokens');
    ui.stdin.write('t');
    await frame(ui, 'sparklines show cost');
    expectFits(ui.lastFrame()!, 100, 23);
  });
});

describe('InspectView', () => {
  const items = [req({ model: 'gpt-4o-mini' }), req({ model: 'gpt-4.1', status: 429, error: 'rate limited' }), req({ model: 'gpt-5' })];
  const detail: TraceDetail = {
    traceId: 'x',
    at: '2025-06-01T12:00:00.000Z',
    client: {
      request: { headers: { authorization: 'Bearer rk_live_abcdefghijklmnop', 'content-type': 'application/json' }, body: '{"model":"fast","messages":[{"role":"user","content":"Hi"}]}' },
      response: { headers: { 'content-type': 'application/json' }, body: '{"id":"chatcmpl-1","choices":[]}' },
    },
    upstream: {
      url: 'https://api.openai.com/v1/chat/completions',
      request: { headers: { authorization: 'Bearer sk-proj-secretsecretsecret' }, body: '{"model":"gpt-4o-mini","api_key":"sk-inline-secret-123456"}' },
      response: { headers: { 'x-request-id': 'req_1' }, body: '{"id":"up-1"}' },
    },
  };

  it('lists requests with the newest selected; arrows move; enter shows details; esc returns', async () => {
    const src = new FakeSource([['/api/logs', { logs: logRows(items), nextCursor: null }]]);
    const ui = render(<InspectView source={src} width={80} height={23} onQuit={() => {}} />);
    let f = await frame(ui, /router inspect · 3 requests · following newest/);
    expect(f).toMatch(/^› .*openai\/gpt-5/m);
    ui.stdin.write(KEY.up);
    f = await frame(ui, /^› .*429 openai\/gpt-4\.1/m);
    expect(f).not.toContain('following newest');
    ui.stdin.write(KEY.enter);
    f = await frame(ui, /Headers and bodies: not captured/);
    expect(f).toMatch(/^trace {6}trace-\d+$/m);
    expect(f).toMatch(/^status {5}429 {2}finish stop$/m);
    expect(f).toMatch(/^error {6}rate limited$/m);
    expect(f).toMatch(/Headers and bodies: not captured/);
    expectFits(ui.lastFrame()!, 80, 23);
    ui.stdin.write(KEY.esc);
    await frame(ui, /^› .*openai\/gpt-4\.1/m);
    // The missing route was asked once only, even when another request is opened.
    ui.stdin.write(KEY.down);
    ui.stdin.write(KEY.enter);
    await frame(ui, /^trace {6}trace-.*\n(.*\n)*Headers and bodies: not captured/m);
    expect(src.count('/api/logs/traces/')).toBe(1);
  });

  it('with recorded bodies: client and upstream side by side, secrets masked; tab shows the responses', async () => {
    const src = new FakeSource([
      ['/api/logs/traces/', detail],
      ['/api/logs', { logs: logRows(items), nextCursor: null }],
    ]);
    const ui = render(<InspectView source={src} width={120} height={30} onQuit={() => {}} />);
    let f = await frame(ui, 'client request (as translated)');
    // Split view: the list and the detail together.
    expect(f.split('\n')[1]).toMatch(/openai\/gpt-4o-mini .*trace {6}trace-\d+$/);
    expect(f).toMatch(/^› .*openai\/gpt-5 .* endpoint {3}\/v1\/chat\/completions/m);
    expect(f).toMatch(/client request \(as translated\)\s+│ upstream request https:\/\/api\.open/);
    expect(f).toContain('authorization: Bearer rk_l…(24)');
    expect(f).toContain('authorization: Bearer sk-p…(26)');
    expect(f).toContain('"api_key": "sk-i…(23)"');
    expect(f).not.toContain('secretsecret');
    expect(f).not.toContain('abcdefghijklmnop');
    ui.stdin.write(KEY.tab);
    f = await frame(ui, /client response \(as translated\)\s+│ upstream response/);
    expect(f).toContain('x-request-id: req_1');
    expectFits(ui.lastFrame()!, 120, 30);
  });

  it('new live requests join the list; f follows the newest again', async () => {
    const src = new FakeSource([['/api/logs', { logs: logRows(items), nextCursor: null }]]);
    const ui = render(<InspectView source={src} width={80} height={23} onQuit={() => {}} />);
    await frame(ui, /^› .*gpt-5/m);
    ui.stdin.write(KEY.up);
    await frame(ui, /^› .*gpt-4\.1/m);
    src.emit(req({ model: 'o3' }));
    await frame(ui, '4 requests');
    await frame(ui, /^› .*gpt-4\.1/m);
    ui.stdin.write('f');
    await frame(ui, /^› .*openai\/o3/m);
  });

  it('an opened detail stays on its request while new ones arrive (issue 27 item 13)', async () => {
    // Narrow: enter while following the newest opens that request and keeps it.
    const src = new FakeSource([['/api/logs', { logs: logRows(items), nextCursor: null }]]);
    const ui = render(<InspectView source={src} width={80} height={23} onQuit={() => {}} />);
    await frame(ui, /^› .*openai\/gpt-5/m);
    ui.stdin.write(KEY.enter);
    const opened = await frame(ui, /^model {6}openai\/gpt-5 /m);
    const trace = /^trace {6}(trace-\d+)$/m.exec(opened)![1];
    src.emit(req({ model: 'o3' }));
    let f = await frame(ui, '4 requests');
    expect(f).toMatch(/^model {6}openai\/gpt-5 /m);
    expect(f).toMatch(new RegExp(`^trace {6}${trace}$`, 'm'));
    expect(f).not.toContain('following newest');
    ui.stdin.write(KEY.esc);
    f = await frame(ui, /^› .*openai\/gpt-5/m);
    expect(f).toMatch(/openai\/o3/);

    // Wide (list and detail side by side): moving down onto the newest selects it; it stays selected.
    const wide = new FakeSource([['/api/logs', { logs: logRows(items), nextCursor: null }]]);
    const w = render(<InspectView source={wide} width={120} height={30} onQuit={() => {}} />);
    await frame(w, /^› .*openai\/gpt-5/m);
    w.stdin.write(KEY.up);
    await frame(w, /^› .*openai\/gpt-4\.1/m);
    w.stdin.write(KEY.down);
    await frame(w, (fr) => /^› .*openai\/gpt-5/m.test(fr) && !fr.includes('following newest'));
    wide.emit(req({ model: 'o4-mini' }));
    f = await frame(w, '4 requests');
    expect(f).toMatch(/^› .*openai\/gpt-5 /m);
    expect(f).toMatch(/ model {6}openai\/gpt-5 /);
    expect(f).not.toContain('following newest');
  });
});

describe('Dashboard', () => {
  const now = Date.parse('2025-06-01T12:00:30.000Z');
  const routes = (): Array<[string, unknown]> => [
    ['/api/system/status', { running: true, pid: 4242, url: 'http://127.0.0.1:20128', version: '0.1.0', uptimeSeconds: 3725 }],
    [
      '/api/providers',
      {
        connections: [
          { id: 'c1', provider: 'openai', name: 'main', isActive: true },
          { id: 'c2', provider: 'openai', name: 'backup', isActive: false },
          { id: 'c3', provider: 'anthropic', name: 'work', isActive: true },
        ],
      },
    ],
    ['/api/combos', { combos: [{ id: 'k1', name: 'fast', strategy: 'priority', models: [{ model: 'groq/llama-3.3-70b' }, { model: 'openai/gpt-4o-mini' }], targetTimeoutMs: null }] }],
    [
      '/api/resilience',
      {
        breakers: [{ provider: 'anthropic', state: 'open', consecutiveFailures: 5, openUntil: new Date(now + 25_000).toISOString() }],
        cooldowns: [{ connectionId: 'c1', model: 'gpt-4.1', until: now + 10_000, reason: 'rate_limit', remainingSeconds: 10 }],
        settings: {},
      },
    ],
  ];

  it('shows status, providers with circuit and cooldowns, combos, throughput and errors; fits 80x24', async () => {
    const src = new FakeSource(routes());
    const ui = render(<Dashboard source={src} width={80} height={23} now={now} onOpen={() => {}} onQuit={() => {}} />);
    await frame(ui, /^fast \(priority\)/m);
    src.emit(req({ timestamp: new Date(now - 2000).toISOString() }));
    src.emit(req({ timestamp: new Date(now - 1000).toISOString(), provider: 'anthropic', model: 'claude-haiku-4-5', status: 503, error: 'circuit open' }));
    src.emit({ type: 'status', timestamp: '', version: '0.1.0', uptimeSeconds: 3726, requestsPerSecond: 1.5, inFlight: 2, openStreams: 1, liveClients: 1, usageQueue: { queued: 0, dropped: 0, estimating: 0 } });
    const f = await frame(ui, (x) => /last min 2 req, 1 err/.test(x) && /in flight 2/.test(x) && /^12:00:29 503/m.test(x));
    expect(f).toMatch(/^router dashboard · http:\/\/127\.0\.0\.1:20128 · v0\.1\.0 · up 1h 2m\s+● live$/m);
    expect(f).toMatch(/^daemon {2}pid 4242 {2}in flight 2 {2}streams 1 {2}rate 1\.5\/s {2}last min 2 req, 1 err/m);
    expect(f).toMatch(/^requests\/s \(46s\)\s+.*[▁▂▃▄▅▆▇█].*\s+1 max$/m);
    expect(f).toMatch(/^anthropic\s+1\/1\s+open 25s\s+0\s+1\s+1$/m);
    expect(f).toMatch(/^openai\s+1\/2\s+closed\s+1\s+1\s+0$/m);
    expect(f).toMatch(/^fast \(priority\): groq\/llama-3\.3-70b, openai\/gpt-4o-mini$/m);
    expect(f).toMatch(/^12:00:29 503 anthropic\/claude-haiku-4-5 {2}circuit open$/m);
    expect(f.trim().split('\n').at(-1)).toBe('l logs  u usage  i inspect  r refresh  q quit');
    expectFits(ui.lastFrame()!, 80, 23);
  });

  it('keys open the other views; r refreshes; breakers are read every 5 s, config every 30 s', async () => {
    expect(POLL).toEqual({ resilienceMs: 5_000, configMs: 30_000 });
    const onOpen = vi.fn();
    const src = new FakeSource(routes());
    const ui = render(<Dashboard source={src} width={80} height={23} now={now} onOpen={onOpen} onQuit={() => {}} />);
    await frame(ui, /^fast \(priority\)/m);
    await tick(200);
    expect([src.count('/api/resilience'), src.count('/api/providers'), src.count('/api/combos')]).toEqual([1, 1, 1]);
    for (const k of ['l', 'u', 'i']) ui.stdin.write(k);
    expect(onOpen.mock.calls.map((c) => c[0])).toEqual(['logs', 'usage', 'inspect']);
    ui.stdin.write('r');
    await frame(ui, () => src.count('/api/resilience') === 2 && src.count('/api/providers') === 2);
    expect([src.count('/api/resilience'), src.count('/api/providers')]).toEqual([2, 2]);
  });

  it('a daemon error is shown in place, not thrown', async () => {
    const src = new FakeSource([['/api/system/status', { running: true, pid: 1, url: 'x', version: '0.1.0', uptimeSeconds: 1 }]]);
    const ui = render(<Dashboard source={src} width={80} height={23} now={now} onOpen={() => {}} onQuit={() => {}} />);
    await frame(ui, /problem: the daemon has no route GET \/api\/(providers|combos|resilience)/);
  });
});

describe('App', () => {
  const routes: Array<[string, unknown]> = [
    ['/api/system/status', { running: true, pid: 1, url: 'http://127.0.0.1:20128', version: '0.1.0', uptimeSeconds: 1 }],
    ['/api/providers', { connections: [] }],
    ['/api/combos', { combos: [] }],
    ['/api/resilience', { breakers: [], cooldowns: [], settings: {} }],
    ['/api/logs', { logs: [], nextCursor: null }],
    ['/api/usage/breakdown', { rows: [] }],
    ['/api/usage/timeseries', { points: [] }],
  ];

  it('dashboard -> logs -> esc -> dashboard -> usage -> esc -> inspect', async () => {
    const src = new FakeSource(routes);
    const ui = render(<App source={src} view="dashboard" size={{ width: 80, height: 23 }} />);
    await frame(ui, /^router dashboard/);
    ui.stdin.write('l');
    await frame(ui, /^router logs · all requests/);
    expect(strip(ui.lastFrame())).toContain('esc back');
    ui.stdin.write(KEY.esc);
    await frame(ui, /^router dashboard/);
    ui.stdin.write('u');
    await frame(ui, /^router usage/);
    ui.stdin.write(KEY.esc);
    await frame(ui, /^router dashboard/);
    ui.stdin.write('i');
    await frame(ui, /^router inspect/);
  });

  it('a view opened on its own has no "esc back"', async () => {
    const ui = render(<App source={new FakeSource(routes)} view="logs" size={{ width: 80, height: 23 }} />);
    const f = await frame(ui, 'q quit');
    expect(f).not.toContain('esc back');
  });

  it('reflows on resize: the terminal size is read again on every resize event', async () => {
    const src = new FakeSource(routes);
    const ui = render(<App source={src} view="dashboard" />);
    await frame(ui, 'q quit');
    // ink-testing-library's stdout is 100 columns; the rows default to 24 (23 usable).
    expectFits(ui.lastFrame()!, 100, 23);
    expect(strip(ui.lastFrame()).split('\n')[0]!.length).toBe(100);
    Object.defineProperty(ui.stdout, 'columns', { value: 60, configurable: true });
    Object.defineProperty(ui.stdout, 'rows', { value: 16, configurable: true });
    ui.stdout.emit('resize');
    await frame(ui, (f) => f.split('\n')[0]!.length === 60);
    expectFits(ui.lastFrame()!, 60, 15);
    expect(strip(ui.lastFrame()).split('\n')[0]!.length).toBe(60);
  });
});

describe('TUIs keep their data (issue 15 item 7)', () => {
  const status = (pid: number) => ({ running: true, pid, url: 'http://127.0.0.1:20128', version: '0.1.0', uptimeSeconds: 5, home: '/h' });
  const base = (pid: number): Array<[string, unknown]> => [
    ['/api/system/status', status(pid)],
    ['/api/providers', { connections: [{ id: 'c1', provider: 'openai', name: 'main', isActive: true }] }],
    ['/api/combos', { combos: [] }],
    ['/api/resilience', { breakers: [], cooldowns: [], settings: {} }],
    ['/api/logs', { logs: [], nextCursor: null }],
    ['/api/usage/breakdown', { rows: [] }],
    ['/api/usage/timeseries', { points: [] }],
  ];
  const recent = (over: Partial<LiveRequest> = {}) => req({ timestamp: new Date(Date.now() - 1_000).toISOString(), ...over });

  it('the dashboard keeps its sparklines, last-minute counts and errors across view switches', async () => {
    const src = new FakeSource(base(4242));
    const ui = render(<App source={src} view="dashboard" size={{ width: 80, height: 23 }} />);
    await frame(ui, /pid 4242/);
    src.emit(recent());
    src.emit(recent({ status: 502, error: 'upstream failed' }));
    await frame(ui, /last min 2 req, 1 err/);
    ui.stdin.write('l');
    await frame(ui, /^router logs/);
    // a request while the logs view is on the screen counts too
    src.emit(recent());
    ui.stdin.write(KEY.esc);
    const f = await frame(ui, /^router dashboard/);
    expect(f).toMatch(/last min 3 req, 1 err/);
    expect(f).toMatch(/^requests\/s .*[▁▂▃▄▅▆▇█]/m);
    expect(f).toMatch(/^\d\d:\d\d:\d\d 502 openai\/gpt-4o-mini {2}upstream failed$/m);
    expect(f).toMatch(/^openai\s+1\/1\s+closed\s+0\s+3\s+1$/m);
  });

  it('after a daemon restart the dashboard shows the new pid at once, and counts the backfilled requests once', async () => {
    const src = new FakeSource(base(4242));
    const ui = render(<App source={src} view="dashboard" size={{ width: 80, height: 23 }} />);
    await frame(ui, /pid 4242/);
    const seenLive = recent();
    src.emit(seenLive);
    await frame(ui, /last min 1 req/);
    src.routes[0] = ['/api/system/status', status(5151)];
    src.reconnect();
    await frame(ui, /pid 5151/);
    // what the live layer backfills after the reconnect: one new request, one already counted
    src.emit(recent({ status: 429, error: 'rate limited' }));
    src.emit(seenLive);
    const f = await frame(ui, /last min 2 req, 1 err/);
    expect(f).not.toMatch(/pid 4242/);
  });

  it('the dashboard starts from the last two minutes of the request log, not from zero', async () => {
    const history = [recent(), recent({ status: 500, error: 'boom' })];
    const src = new FakeSource([...base(7).filter(([p]) => p !== '/api/logs'), ['/api/logs', { logs: logRows(history), nextCursor: null }]]);
    const ui = render(<App source={src} view="dashboard" size={{ width: 80, height: 23 }} />);
    await frame(ui, /last min 2 req, 1 err/);
    expect(src.calls.find((c) => c.startsWith('/api/logs'))).toMatch(/^\/api\/logs\?from=\d+&limit=500$/);
    // the same requests arriving live again are not counted twice
    for (const h of history) src.emit(h);
    await tick(100);
    expect(strip(ui.lastFrame())).toMatch(/last min 2 req, 1 err/);
  });

  it('inspect: a 404 for one trace says "not captured" for that request only; the next one is asked', async () => {
    const items = [req({ traceId: 'gone', model: 'gpt-4.1' }), req({ traceId: 'kept', model: 'gpt-5' })];
    const detail: TraceDetail = {
      traceId: 'kept',
      at: '2025-06-01T12:00:00.000Z',
      client: { request: { headers: {}, body: '{"model":"gpt-5"}' }, response: { headers: {}, body: '{"id":"r1"}' } },
      upstream: { url: 'https://api.openai.com/v1/chat/completions', request: { headers: {}, body: '{}' }, response: { headers: {}, body: '{}' } },
    };
    const src = new FakeSource([
      [
        '/api/logs/traces/',
        (path: string) => {
          if (path.endsWith('/gone')) throw Object.assign(new Error('This request was not captured (only the last 200 are kept).'), { status: 404 });
          return detail;
        },
      ],
      ['/api/logs', { logs: logRows(items), nextCursor: null }],
    ]);
    const ui = render(<InspectView source={src} width={80} height={23} onQuit={() => {}} />);
    await frame(ui, /^› .*openai\/gpt-5/m);
    ui.stdin.write(KEY.up);
    await frame(ui, /^› .*openai\/gpt-4\.1/m);
    ui.stdin.write(KEY.enter);
    await frame(ui, /Headers and bodies: This request was not captured/);
    ui.stdin.write(KEY.esc);
    await frame(ui, /^› .*openai\/gpt-4\.1/m);
    ui.stdin.write(KEY.down);
    await frame(ui, /^› .*openai\/gpt-5/m);
    ui.stdin.write(KEY.enter);
    await frame(ui, 'client request (as translated)');
    expect(src.count('/api/logs/traces/')).toBe(2);
  });
});
