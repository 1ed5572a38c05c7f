/**
 * The soak and fault run: mixed traffic against the real daemon (dist/, fresh state folder) and the mock
 * upstreams (test/mocks) for a given time, sampling the daemon's RSS, heap, open descriptors and event-loop
 * delay, then a graceful stop and a count of the usage rows. Used by bench/soak.mjs (30 minutes, or
 * `--quick` 10) and by test/soak/soak.test.ts (a short run in `npm test`).
 *
 * Traffic: every client format (Chat Completions, Responses, Anthropic Messages, Gemini), streamed and
 * not, native and translated, tool calls, 1 MB bodies, a combo whose first target flaps (errors, hangs,
 * cut streams, garbage in phases), client aborts (before and during the reply), and upstream faults on
 * the main mock (hang until the first-byte timeout, a stream cut mid-way, a garbage body, a 500).
 *
 * It fails when RSS or descriptors grow past a bound after warm-up, when any request is still open past
 * its deadline, or when completed requests and usage rows do not match.
 */
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import type { Behavior, MockRequest } from '../mocks/types.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

export interface SoakOptions {
  /** Traffic time, ms. */
  durationMs: number;
  /** Samples before this are warm-up (not compared), ms; default 20 % of the duration, at most 3 min. */
  warmupMs?: number;
  /** Concurrent client loops; default 8. */
  concurrency?: number;
  /** Sampling period, ms; default 5 s (at least 10 samples per run). */
  sampleEveryMs?: number;
  /** RSS growth allowed after warm-up, bytes; default 64 MiB. */
  rssGrowthBytes?: number;
  /** Open-descriptor growth allowed after warm-up; default 25. */
  fdGrowth?: number;
  /** Progress lines (a sample every period); default none. */
  log?: (line: string) => void;
}

export interface Sample {
  t: number;
  rss: number;
  heapUsed: number;
  fds: number;
  loopP99: number | null;
  loopMax: number | null;
  requests: number;
}

export interface SoakResult {
  ok: boolean;
  failures: string[];
  /** The report: counts per kind, resources, checks. */
  table: string;
  samples: Sample[];
  counts: { sent: number; completed: number; aborted: number; hung: number; rows: number; tracesWithRows: number; missingRows: number; foreignRows: number };
  loadAverage: number[];
}

/** Request deadline the daemon is given, and how far past it a request counts as hung. */
const DEADLINE_MS = 15_000;
const HUNG_SLACK_MS = 5_000;
const FIRST_BYTE_MS = 2_000;
const MiB = 1024 * 1024;
const UA = 'router-soak/';
const NO_PROCESS = 'GET /api/telemetry/summary has no process field (RSS, heap, fds, event-loop delay of the daemon)';

interface Kind {
  name: string;
  weight: number;
  path: (m: string) => string;
  body: () => Record<string, unknown>;
  model: string;
  stream: boolean;
  /** Expected to fail (an upstream fault): any status counts as completed. */
  fault?: boolean;
  /** Aborted by the client after a random delay. */
  abort?: boolean;
}

const chatPath = () => '/v1/chat/completions';
/**
 * Upstream faults go to a provider of their own (an OpenAI-compatible one on the same mock): they trip its
 * circuit breaker, as they should, without refusing the healthy traffic of the other providers.
 */
const FAULTY = 'groq/llama-3.3-70b-versatile';
const text = (i: number) => `Soak request ${i}: say something short.`;
let n = 0;
const chat = (extra: Record<string, unknown> = {}) => () => ({ messages: [{ role: 'user', content: text(n++) }], ...extra });
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
const bigContent = () => `${'lorem ipsum dolor sit amet '.repeat(Math.ceil(MiB / 27)).slice(0, MiB)} #soak:big`;

const KINDS: Kind[] = [
  { name: 'chat', weight: 10, path: chatPath, model: 'openai/gpt-4o', stream: false, body: chat() },
  { name: 'chat stream', weight: 10, path: chatPath, model: 'openai/gpt-4o', stream: true, body: chat({ stream_options: { include_usage: true } }) },
  { name: 'chat stream (estimated)', weight: 3, path: chatPath, model: 'openai/gpt-4o', stream: true, body: chat() },
  { name: 'chat tools', weight: 4, path: chatPath, model: 'openai/gpt-4o', stream: false, body: chat({ tools }) },
  { name: 'chat tools stream', weight: 4, path: chatPath, model: 'openai/gpt-4o', stream: true, body: chat({ tools }) },
  { name: 'chat -> anthropic', weight: 5, path: chatPath, model: 'anthropic/claude-sonnet-4-5', stream: true, body: chat() },
  { name: 'responses', weight: 5, path: () => '/v1/responses', model: 'openai/gpt-4o', stream: false, body: () => ({ input: text(n++) }) },
  { name: 'responses stream', weight: 5, path: () => '/v1/responses', model: 'openai/gpt-4o', stream: true, body: () => ({ input: text(n++) }) },
  { name: 'messages', weight: 5, path: () => '/v1/messages', model: 'anthropic/claude-sonnet-4-5', stream: false, body: () => ({ max_tokens: 100, messages: [{ role: 'user', content: text(n++) }] }) },
  { name: 'messages stream tools', weight: 4, path: () => '/v1/messages', model: 'anthropic/claude-sonnet-4-5', stream: true, body: () => ({ max_tokens: 100, tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }], messages: [{ role: 'user', content: text(n++) }] }) },
  { name: 'messages -> openai', weight: 4, path: () => '/v1/messages', model: 'openai/gpt-4o', stream: true, body: () => ({ max_tokens: 100, messages: [{ role: 'user', content: text(n++) }] }) },
  { name: 'gemini', weight: 4, path: (m) => `/v1beta/models/${m}:generateContent`, model: 'gemini/gemini-2.5-flash', stream: false, body: () => ({ contents: [{ role: 'user', parts: [{ text: text(n++) }] }] }) },
  { name: 'gemini stream', weight: 4, path: (m) => `/v1beta/models/${m}:streamGenerateContent?alt=sse`, model: 'gemini/gemini-2.5-flash', stream: true, body: () => ({ contents: [{ role: 'user', parts: [{ text: text(n++) }] }] }) },
  { name: '1 MB body', weight: 1, path: chatPath, model: 'openai/gpt-4o', stream: false, body: () => ({ messages: [{ role: 'user', content: bigContent() }] }) },
  { name: 'combo (flapping)', weight: 8, path: chatPath, model: 'soak-flap', stream: false, body: chat() },
  { name: 'combo stream (flapping)', weight: 6, path: chatPath, model: 'soak-flap', stream: true, body: chat({ stream_options: { include_usage: true } }) },
  { name: 'client abort (mid-stream)', weight: 4, path: chatPath, model: 'openai/gpt-4o', stream: true, body: () => ({ stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'slow stream #soak:slowstream' }] }), abort: true },
  { name: 'client abort (slow upstream)', weight: 2, path: chatPath, model: 'openai/gpt-4o', stream: false, body: () => ({ messages: [{ role: 'user', content: 'slow #soak:slow' }] }), abort: true },
  { name: 'upstream hang', weight: 1, path: chatPath, model: FAULTY, stream: false, body: () => ({ messages: [{ role: 'user', content: 'hang #soak:hang' }] }), fault: true },
  { name: 'upstream drop', weight: 2, path: chatPath, model: FAULTY, stream: true, body: () => ({ messages: [{ role: 'user', content: 'drop #soak:drop' }] }), fault: true },
  { name: 'upstream garbage', weight: 2, path: chatPath, model: FAULTY, stream: false, body: () => ({ messages: [{ role: 'user', content: 'garbage #soak:garbage' }] }), fault: true },
  { name: 'upstream 500', weight: 2, path: chatPath, model: FAULTY, stream: false, body: () => ({ messages: [{ role: 'user', content: 'fail #soak:500' }] }), fault: true },
];

/** The main mock's faults, chosen by a marker in the request's text. */
function faultOf(req: MockRequest): Behavior | undefined {
  const b = req.body;
  if (!b.includes('#soak:')) return req.json?.tools ? { type: 'tool-calls', calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] } : undefined;
  if (b.includes('#soak:hang')) return { type: 'hang' };
  if (b.includes('#soak:drop')) return { type: 'drop-mid-stream', afterChunks: 2 };
  if (b.includes('#soak:garbage')) return { type: 'garbage' };
  if (b.includes('#soak:500')) return { type: 'status', status: 500 };
  if (b.includes('#soak:slowstream')) return { type: 'slow-stream', intervalMs: 80 };
  if (b.includes('#soak:slow')) return { type: 'delay', ms: 400 };
  return undefined;
}

/** The flapping upstream: phases of a few seconds, healthy, then failing in one of four ways. */
function flapping(startedAt: number): (req: MockRequest) => Behavior | undefined {
  const phases: Array<Behavior | undefined> = [undefined, { type: 'status', status: 503 }, undefined, { type: 'drop-mid-stream', afterChunks: 1 }, undefined, { type: 'garbage' }, undefined, { type: 'delay', ms: 3_000 }];
  return () => phases[Math.floor((performance.now() - startedAt) / 3_000) % phases.length];
}

interface KindStats {
  sent: number;
  completed: number;
  aborted: number;
  hung: number;
  /** Replies without an X-Router-Trace-Id header. */
  noTrace: number;
  statuses: Map<number, number>;
  latencies: number[];
}

function pick(total: number): Kind {
  let r = Math.random() * total;
  for (const k of KINDS) {
    r -= k.weight;
    if (r < 0) return k;
  }
  return KINDS[0]!;
}

/** RSS and open descriptors of a process from /proc (Linux); the daemon's own report is preferred. */
function procStats(pid: number): { rss: number; fds: number } | undefined {
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    return { rss, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]! : NaN;
};
const mb = (b: number) => `${(b / MiB).toFixed(1)} MB`;

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const log = opts.log ?? (() => {});
  const warmupMs = opts.warmupMs ?? Math.min(180_000, opts.durationMs * 0.2);
  const sampleEvery = opts.sampleEveryMs ?? Math.min(5_000, Math.max(500, opts.durationMs / 10));
  const rssBound = opts.rssGrowthBytes ?? 64 * MiB;
  const fdBound = opts.fdGrowth ?? 25;
  const concurrency = opts.concurrency ?? 8;
  const mock = await startMockUpstream();
  const flap = await startMockUpstream();
  let router: RouterProcess | undefined;
  const failures: string[] = [];
  const stats = new Map<string, KindStats>(KINDS.map((k) => [k.name, { sent: 0, completed: 0, aborted: 0, hung: 0, noTrace: 0, statuses: new Map(), latencies: [] }]));
  const completedIds = new Set<number>();
  const samples: Sample[] = [];
  let sent = 0;
  try {
    router = await startRouter({ keepHome: true });
    const r = router;
    const key = await r.createKey();
    const patched = await r.manage('PATCH', '/api/settings', {
      requestDeadlineMs: DEADLINE_MS,
      upstreamFirstByteTimeoutMs: FIRST_BYTE_MS,
      // The fault provider's breaker opens and half-opens throughout the run, yet most faults still reach
      // the upstream (a lower threshold would answer most of them with the open circuit's 503).
      breakerFailureThreshold: 50,
      breakerCooldownMs: 2_000,
    });
    if (patched.status !== 200) throw new Error(`settings: ${JSON.stringify(patched.json)}`);
    await r.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    await r.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-up', providerSpecificData: { baseUrl: mock.anthropicBase } });
    await r.addConnection({ provider: 'gemini', apiKey: 'gem-up', providerSpecificData: { baseUrl: mock.geminiBase } });
    await r.addConnection({ provider: 'groq', apiKey: 'sk-groq', providerSpecificData: { baseUrl: mock.openaiBase } });
    await r.addConnection({ provider: 'deepseek', apiKey: 'sk-ds', providerSpecificData: { baseUrl: flap.openaiBase } });
    const combo = await r.manage('POST', '/api/combos', { name: 'soak-flap', models: ['deepseek/deepseek-chat', 'openai/gpt-4o-mini'], targetTimeoutMs: 1_500 });
    if (combo.status !== 201) throw new Error(`combo: ${JSON.stringify(combo.json)}`);
    mock.handle(faultOf);
    const started = performance.now();
    flap.handle(flapping(started));

    const totalWeight = KINDS.reduce((a, k) => a + k.weight, 0);
    const open = new Map<number, { kind: string; since: number; abort: AbortController }>();
    let nextId = 0;
    const until = started + opts.durationMs;

    const one = async (kind: Kind): Promise<void> => {
      const id = nextId++;
      const st = stats.get(kind.name)!;
      st.sent++;
      sent++;
      const abort = new AbortController();
      const t0 = performance.now();
      open.set(id, { kind: kind.name, since: t0, abort });
      const body = { model: kind.model, stream: kind.stream, ...kind.body() };
      if (kind.path(kind.model).startsWith('/v1beta')) delete (body as Record<string, unknown>).model;
      if (kind.path(kind.model).startsWith('/v1beta')) delete (body as Record<string, unknown>).stream;
      if (kind.abort) setTimeout(() => abort.abort(), 20 + Math.random() * 300);
      try {
        const res = await fetch(`${r.url}${kind.path(kind.model)}`, {
          method: 'POST',
          // The usage row keeps the user agent: it ties each row to its request, whatever the reply carried.
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': `${UA}${id}` },
          body: JSON.stringify(body),
          signal: abort.signal,
        });
        await res.arrayBuffer();
        if (!res.headers.get('x-router-trace-id')) st.noTrace++;
        completedIds.add(id);
        st.completed++;
        st.statuses.set(res.status, (st.statuses.get(res.status) ?? 0) + 1);
        if (!kind.fault && !kind.abort && !kind.name.startsWith('combo') && res.status !== 200) {
          if (failures.length < 50) failures.push(`${kind.name}: status ${res.status}`);
        }
        st.latencies.push(performance.now() - t0);
      } catch (err) {
        if (abort.signal.aborted && open.has(id)) st.aborted++;
        else if (!open.has(id)) {
          // ended by the hang watchdog below
        } else if (failures.length < 50) failures.push(`${kind.name}: ${(err as Error).message}`);
      } finally {
        open.delete(id);
      }
    };

    // Requests open past their deadline are hung: counted, then released so the run can end.
    const watchdog = setInterval(() => {
      const now = performance.now();
      for (const [id, o] of open) {
        if (now - o.since < DEADLINE_MS + HUNG_SLACK_MS) continue;
        open.delete(id);
        stats.get(o.kind)!.hung++;
        o.abort.abort();
      }
    }, 500);

    const sampler = async () => {
      const t = await r.manage('GET', '/api/telemetry/summary?minutes=1');
      const p = t.json?.process;
      if (!p && !failures.includes(NO_PROCESS)) failures.push(NO_PROCESS);
      const proc = procStats(r.pid);
      samples.push({
        t: Math.round(performance.now() - started),
        rss: p?.rssBytes ?? proc?.rss ?? NaN,
        heapUsed: p?.heapUsedBytes ?? NaN,
        fds: p?.openFds ?? proc?.fds ?? NaN,
        loopP99: p?.eventLoopDelayMs?.p99 ?? null,
        loopMax: p?.eventLoopDelayMs?.max ?? null,
        requests: sent,
      });
      const s = samples.at(-1)!;
      log(`t=${(s.t / 1000).toFixed(0)}s requests=${sent} rss=${mb(s.rss)} heap=${mb(s.heapUsed)} fds=${s.fds} loop p99=${s.loopP99}ms max=${s.loopMax}ms open=${open.size}`);
      // The mocks keep every request (bodies included) for assertions; the soak needs none of them.
      mock.requests.splice(0);
      flap.requests.splice(0);
    };
    await sampler();
    let sampling = Promise.resolve();
    const sampleTimer = setInterval(() => {
      sampling = sampling.then(sampler).catch((err) => void failures.push(`sampling failed: ${(err as Error).message}`));
    }, sampleEvery);

    const loop = async () => {
      while (performance.now() < until) {
        await one(pick(totalWeight));
        await new Promise((res) => setTimeout(res, Math.random() * 40));
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
    clearInterval(sampleTimer);
    await sampling;
    await sampler();
    clearInterval(watchdog);

    await r.stop();
    const db = new Database(join(r.home, 'router.db'), { readonly: true });
    let rows = 0;
    let tracesWithRows = 0;
    let missingRows = 0;
    let foreignRows = 0;
    try {
      rows = (db.prepare('SELECT COUNT(*) AS n FROM usage_log').get() as { n: number }).n;
      const agents = db.prepare('SELECT DISTINCT user_agent AS ua FROM usage_log').all() as Array<{ ua: string | null }>;
      const ids = new Set<number>();
      for (const { ua } of agents) {
        const id = ua?.startsWith(UA) ? Number(ua.slice(UA.length)) : NaN;
        if (Number.isInteger(id) && id >= 0 && id < sent) ids.add(id);
        else foreignRows++;
      }
      tracesWithRows = ids.size;
      for (const id of completedIds) if (!ids.has(id)) missingRows++;
    } finally {
      db.close();
    }
    const counts = { sent, completed: completedIds.size, aborted: sum(stats, 'aborted'), hung: sum(stats, 'hung'), rows, tracesWithRows, missingRows, foreignRows };

    // Checks.
    if (counts.hung > 0) failures.push(`${counts.hung} request(s) still open ${(DEADLINE_MS + HUNG_SLACK_MS) / 1000}s after they started (request deadline ${DEADLINE_MS / 1000}s)`);
    if (missingRows > 0) failures.push(`${missingRows} completed request(s) have no usage row`);
    // Every client request that reached the proxy has at least one row (a combo one per attempt): no more
    // traces than requests sent, no fewer than requests completed.
    if (foreignRows > 0) failures.push(`${foreignRows} usage row group(s) belong to no request the soak sent`);
    const post = samples.filter((s) => s.t >= warmupMs);
    const head = post.slice(0, Math.max(1, Math.min(3, Math.floor(post.length / 4))));
    const tail = post.slice(-Math.max(1, Math.min(3, Math.floor(post.length / 4))));
    const rssBase = median(head.map((s) => s.rss));
    const rssEnd = median(tail.map((s) => s.rss));
    const fdBase = median(head.map((s) => s.fds));
    const fdEnd = median(tail.map((s) => s.fds));
    const heapBase = median(head.map((s) => s.heapUsed));
    const heapEnd = median(tail.map((s) => s.heapUsed));
    if (post.length < 2) failures.push('too few samples after warm-up to compare');
    if (rssEnd - rssBase > rssBound) failures.push(`RSS grew ${mb(rssEnd - rssBase)} after warm-up (bound ${mb(rssBound)})`);
    if (fdEnd - fdBase > fdBound) failures.push(`open descriptors grew by ${fdEnd - fdBase} after warm-up (bound ${fdBound})`);

    const lines: string[] = [];
    lines.push(`soak: ${(opts.durationMs / 60_000).toFixed(1)} min of traffic, ${concurrency} client loops, warm-up ${(warmupMs / 1000).toFixed(0)} s, ${samples.length} samples`);
    lines.push('');
    lines.push(`${'kind'.padEnd(30)}${'sent'.padStart(7)}${'done'.padStart(7)}${'abort'.padStart(7)}${'hung'.padStart(6)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}  statuses`);
    for (const k of KINDS) {
      const s = stats.get(k.name)!;
      const st = [...s.statuses].sort((a, b) => a[0] - b[0]).map(([c, x]) => `${c}:${x}`).join(' ');
      lines.push(`${k.name.padEnd(30)}${String(s.sent).padStart(7)}${String(s.completed).padStart(7)}${String(s.aborted).padStart(7)}${String(s.hung).padStart(6)}${pct(s.latencies, 50).toFixed(0).padStart(9)}${pct(s.latencies, 99).toFixed(0).padStart(9)}  ${st}`);
    }
    lines.push('');
    const loopP99 = samples.map((s) => s.loopP99).filter((x): x is number => x !== null);
    const loopMax = samples.map((s) => s.loopMax).filter((x): x is number => x !== null);
    lines.push(`${'resource'.padEnd(26)}${'after warm-up'.padStart(15)}${'end'.padStart(12)}${'max'.padStart(12)}${'bound'.padStart(14)}  verdict`);
    const row = (name: string, base: string, end: string, max: string, bound: string, ok: boolean) =>
      lines.push(`${name.padEnd(26)}${base.padStart(15)}${end.padStart(12)}${max.padStart(12)}${bound.padStart(14)}  ${ok ? 'ok' : 'FAIL'}`);
    row('RSS', mb(rssBase), mb(rssEnd), mb(Math.max(...samples.map((s) => s.rss))), `+${mb(rssBound)}`, rssEnd - rssBase <= rssBound);
    row('heap used', mb(heapBase), mb(heapEnd), mb(Math.max(...samples.map((s) => s.heapUsed))), '-', true);
    row('open fds', String(fdBase), String(fdEnd), String(Math.max(...samples.map((s) => s.fds))), `+${fdBound}`, fdEnd - fdBase <= fdBound);
    row('event-loop delay p99', `${median(loopP99).toFixed(1)} ms`, `${(loopP99.at(-1) ?? NaN).toFixed(1)} ms`, `${Math.max(...loopP99).toFixed(1)} ms`, '-', true);
    row('event-loop delay max', `${median(loopMax).toFixed(1)} ms`, `${(loopMax.at(-1) ?? NaN).toFixed(1)} ms`, `${Math.max(...loopMax).toFixed(1)} ms`, '-', true);
    lines.push('');
    lines.push(`requests sent ${sent}, completed ${counts.completed}, aborted by the client ${counts.aborted}, hung ${counts.hung}`);
    lines.push(`usage rows ${rows} for ${tracesWithRows} requests; completed requests without a row: ${missingRows}, rows of no request: ${foreignRows}  ${missingRows === 0 && foreignRows === 0 ? 'ok' : 'FAIL'}`);
    const noTrace = KINDS.filter((k) => stats.get(k.name)!.noTrace > 0).map((k) => `${k.name} ${stats.get(k.name)!.noTrace}`);
    if (noTrace.length) lines.push(`replies without X-Router-Trace-Id: ${noTrace.join(', ')}`);
    const loadAverage = loadavg();
    lines.push(`load average at the end: ${loadAverage.map((x) => x.toFixed(2)).join(' ')}`);
    lines.push(failures.length ? `FAILED:\n  ${failures.join('\n  ')}` : 'PASSED');
    return { ok: failures.length === 0, failures, table: lines.join('\n'), samples, counts, loadAverage };
  } finally {
    if (router) {
      try {
        process.kill(router.pid, 0);
        await router.stop();
      } catch {
        // already stopped
      }
      rmSync(router.home, { recursive: true, force: true });
    }
    await mock.close();
    await flap.close();
  }
}

function sum(stats: Map<string, KindStats>, field: 'aborted' | 'hung'): number {
  let t = 0;
  for (const s of stats.values()) t += s[field];
  return t;
}

function loadavg(): number[] {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [];
  }
}
