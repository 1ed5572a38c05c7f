/**
 * The spec's error rules ("Errors", rules 1-3) on every path, same format included: an upstream 429's
 * wait reaches the client as `Retry-After` in whole seconds (seconds, epoch s/ms, HTTP date, body hints
 * `reset after 2h7m23s` / `retry after 45s`, 24 h cap, minimum 1, fallback 1), and the message reads
 * `[<code>]: <message>`. A same-format reply keeps the provider's own error object (type, code, param).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-error-rules-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = (await services.keys.create('caller', ['proxy'])).key;
  const res = await app.request(
    'http://router.test/api/providers',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken },
      body: JSON.stringify({ provider: 'openai', apiKey: 'sk-openai-error-rules', providerSpecificData: { baseUrl: mock.openaiBase } }),
    },
    { remoteAddress: '127.0.0.1' },
  );
  expect(res.status).toBe(201);
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

const ROUTES = {
  'same format (Chat Completions -> OpenAI)': (model: string) => ({ path: '/v1/chat/completions', body: { model: `openai/${model}`, messages: [{ role: 'user', content: 'hi' }] } }),
  'translated (Messages -> OpenAI)': (model: string) => ({ path: '/v1/messages', body: { model: `openai/${model}`, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] } }),
};

const now = () => Date.now();
/** [case, response headers, message, expected seconds, tolerance] */
const TABLE: Array<[string, () => Record<string, string>, string, number, number]> = [
  ['seconds', () => ({ 'retry-after': '45' }), 'Rate limit reached', 45, 0],
  ['fractional seconds round up', () => ({ 'retry-after': '12.2' }), 'Rate limit reached', 13, 0],
  ['epoch seconds', () => ({ 'retry-after': String(Math.floor(now() / 1000) + 120) }), 'Rate limit reached', 120, 3],
  ['epoch milliseconds', () => ({ 'retry-after': String(now() + 120_000) }), 'Rate limit reached', 120, 3],
  ['HTTP date', () => ({ 'retry-after': new Date(now() + 90_000).toUTCString() }), 'Rate limit reached', 90, 3],
  ['past date gives the minimum', () => ({ 'retry-after': new Date(now() - 90_000).toUTCString() }), 'Rate limit reached', 1, 0],
  ['zero gives the minimum', () => ({ 'retry-after': '0' }), 'Rate limit reached', 1, 0],
  ['capped at 24 hours', () => ({ 'retry-after': '200000' }), 'Rate limit reached', 86_400, 0],
  ['body hint: reset after 2h7m23s', () => ({}), 'Quota exhausted, reset after 2h7m23s.', 7643, 0],
  ['body hint: retry after 45s', () => ({}), 'Too many requests, please retry after 45s', 45, 0],
  ['body hint capped at 24 hours', () => ({}), 'Quota exhausted, reset after 30h.', 86_400, 0],
  ['no hint: the fallback', () => ({}), 'Rate limit reached', 1, 0],
];

let n = 0;
describe.each(Object.entries(ROUTES))('%s', (routeName, route) => {
  it.each(TABLE)('upstream 429, %s', async (_name, headers, message, seconds, tolerance) => {
    const model = `rules-${n++}`;
    mock.handle((req) =>
      req.model === model ? { type: 'status', status: 429, message, errorType: 'requests', code: 'rate_limit_exceeded', headers: headers() } : undefined,
    );
    const { path, body } = route(model);
    const res = await app.request(
      `http://router.test${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) },
      { remoteAddress: '127.0.0.1' },
    );
    expect(res.status).toBe(429);
    const retryAfter = res.headers.get('retry-after');
    expect(retryAfter, 'Retry-After in whole seconds').toMatch(/^\d+$/);
    expect(Math.abs(Number(retryAfter) - seconds)).toBeLessThanOrEqual(tolerance);
    const json = (await res.json()) as any;
    expect(json.error.message).toBe(`[rate_limit_exceeded]: ${message}`);
    if (routeName.startsWith('same format')) expect(json.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
  });
});

describe('same format keeps the provider error object', () => {
  it('type, code and param stay; the message gets its [code] prefix', async () => {
    mock.handle((req) =>
      req.model === 'rules-param'
        ? { type: 'status', status: 400, body: { error: { message: 'Invalid value for temperature', type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' } } }
        : undefined,
    );
    const res = await app.request(
      'http://router.test/v1/chat/completions',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'openai/rules-param', messages: [{ role: 'user', content: 'hi' }] }),
      },
      { remoteAddress: '127.0.0.1' },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toEqual({
      message: '[invalid_value]: Invalid value for temperature',
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'temperature',
    });
    expect(res.headers.get('retry-after')).toBeNull();
  });
});
