/**
 * Shared setup of the resilience e2e tests: one real daemon (spawned from dist/), one mock upstream, and
 * connections of several providers that all point at the mock's OpenAI base URL. A combo can then list
 * `openai/a`, `groq/b`, `deepseek/c`...: distinct providers (so distinct circuit breakers), and the mock
 * picks each target's behavior by `req.model` (`a`, `b`, `c`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMockUpstream, type Behavior, type MockRequest, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

/** Providers given one connection each, all pointing at the mock (OpenAI-compatible wire format). */
export const PROVIDERS = ['openai', 'groq', 'deepseek', 'mistral', 'together', 'fireworks', 'cerebras', 'xai'] as const;

export interface Env {
  mock: MockUpstream;
  router: RouterProcess;
  key: string;
  /** Connection id per provider (the first one when a provider has several). */
  conn: Record<string, string>;
  stop(): Promise<void>;
}

export interface ChatResult {
  status: number;
  headers: Headers;
  json: any;
  text: string;
  /** Client-side elapsed time of the whole call, ms. */
  ms: number;
}

/**
 * Starts mock + daemon, creates a proxy key and one connection per provider in `providers`. With `home`
 * the daemon restarts on an existing state folder (connections are already there); `keepHome` keeps the
 * folder after `stop()` for such a restart.
 */
export async function setup(
  options: { providers?: readonly string[]; home?: string; keepHome?: boolean; mock?: MockUpstream } = {},
): Promise<Env> {
  const mock = options.mock ?? (await startMockUpstream());
  const router = await startRouter(options.home ? { home: options.home } : { keepHome: options.keepHome });
  const key = await router.createKey();
  const conn: Record<string, string> = {};
  if (!options.home) {
    for (const provider of options.providers ?? PROVIDERS) {
      const c = await router.addConnection({ provider, apiKey: `sk-${provider}`, providerSpecificData: { baseUrl: mock.openaiBase } });
      conn[provider] = c.id;
    }
  }
  return {
    mock,
    router,
    key,
    conn,
    async stop() {
      await router.stop();
      if (!options.mock) await mock.close();
    },
  };
}

/** Default mock answer: the text names the upstream model, so a test sees which target served. */
export function servedBy(req: MockRequest): Behavior {
  return { type: 'text', text: `served by ${req.model}` };
}

/** Installs the default "served by" handler plus per-model behaviors (a function gets the request). */
export function script(mock: MockUpstream, byModel: Record<string, Behavior | ((req: MockRequest) => Behavior | undefined)> = {}): void {
  mock.handle(servedBy);
  mock.handle((req) => {
    const b = req.model === undefined ? undefined : byModel[req.model];
    return typeof b === 'function' ? b(req) : b;
  });
}

export async function settings(env: Env, patch: Record<string, unknown>): Promise<void> {
  const r = await env.router.manage('PATCH', '/api/settings', patch);
  if (r.status !== 200) throw new Error(`settings patch failed: ${r.status} ${JSON.stringify(r.json)}`);
}

/** Creates a combo; returns its record. */
export async function combo(env: Env, body: Record<string, unknown>): Promise<any> {
  const r = await env.router.manage('POST', '/api/combos', body);
  if (r.status !== 201) throw new Error(`combo create failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** Closes every breaker and clears every cooldown (isolation between tests sharing a daemon). */
export async function clearResilience(env: Env): Promise<void> {
  await env.router.manage('POST', '/api/resilience/reset', {});
  await env.router.manage('DELETE', '/api/resilience/model-cooldowns');
}

/** One non-streaming chat completion. */
export async function chat(env: Env, model: string, extra: Record<string, unknown> = {}): Promise<ChatResult> {
  const t0 = performance.now();
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text, ms };
}

/** The reply text of a successful non-streaming chat completion. */
export function content(r: ChatResult): string | undefined {
  return r.json?.choices?.[0]?.message?.content;
}

export interface StreamResult {
  status: number;
  headers: Headers;
  /** Raw body as the client received it. */
  raw: string;
  /** Parsed JSON of every `data:` event except `[DONE]`. */
  events: any[];
  /** Concatenated `choices[0].delta.content`. */
  text: string;
  /** Events carrying an `error`. */
  errors: any[];
  done: boolean;
  ms: number;
}

/** One streaming chat completion, read to the end. */
export async function stream(env: Env, model: string, extra: Record<string, unknown> = {}): Promise<StreamResult> {
  const t0 = performance.now();
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra }),
  });
  const raw = await res.text();
  const ms = performance.now() - t0;
  const events: any[] = [];
  let done = false;
  for (const block of raw.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    try {
      events.push(JSON.parse(data));
    } catch {
      events.push({ unparsed: data });
    }
  }
  const text = events.map((e) => e?.choices?.[0]?.delta?.content ?? '').join('');
  return { status: res.status, headers: res.headers, raw, events, text, errors: events.filter((e) => e?.error), done, ms };
}

/** Mock requests that reached a given upstream model. */
export function hits(mock: MockUpstream, model: string): MockRequest[] {
  return mock.requests.filter((r) => r.endpoint === 'openai.chat' && r.model === model);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value (its type, without the falsy ones) or the time is up. */
export async function until<T>(fn: () => T | Promise<T>, timeoutMs = 15_000, stepMs = 25): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(stepMs);
  }
}

/** A webhook receiver on loopback that keeps every delivered event body. */
export interface Receiver {
  url: string;
  events: Array<{ event: string; timestamp: string; data: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const events: Receiver['events'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        events.push({ ...JSON.parse(Buffer.concat(chunks).toString('utf8')), headers: req.headers });
      } catch {
        // not an event body
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    events,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
