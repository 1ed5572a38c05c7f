import OpenAI from 'openai';
import { expect } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../../support/proxy-env.js';

/** The media e2e set-up: a real daemon, the mock upstream, OpenAI, Groq and Gemini connections to it. */
export async function startMediaEnv(): Promise<ProxyEnv> {
  return startProxyEnv(
    [
      { provider: 'openai', apiKey: 'sk-openai-media' },
      { provider: 'groq', apiKey: 'gsk-groq-media' },
      { provider: 'gemini', apiKey: 'AIza-gemini-media' },
    ],
    [{ prefix: 'node' }],
  );
}

/** The official openai SDK, unmodified, pointed at router. */
export function sdk(env: ProxyEnv, key = env.key): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${env.router.url}/v1`, maxRetries: 0 });
}

/** Waits until `fn` returns a value (not undefined), up to `ms`. */
export async function eventually<T>(fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('eventually: timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The request-log rows of a trace id (every attempt), once the last one is written. */
export async function rowsOf(env: ProxyEnv, trace: string, count = 1): Promise<any[]> {
  return eventually(async () => {
    const r = await env.router.manage('GET', '/api/logs?limit=500');
    const rows = (r.json.logs as any[]).filter((l) => l.traceId === trace);
    return rows.length >= count ? rows : undefined;
  });
}

/** The trace id of an SDK call's raw response. */
export function traceOf(response: Response): string {
  const t = response.headers.get('x-router-trace-id');
  expect(t).toBeTruthy();
  return t!;
}

/** Creates a combo; fails the test when refused. */
export async function combo(env: ProxyEnv, name: string, models: string[]): Promise<void> {
  const r = await env.router.manage('POST', '/api/combos', { name, models });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
}
