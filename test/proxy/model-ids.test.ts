/**
 * Model ids against each provider's id grammar (issue 27 item 2). A Gemini upstream takes the model in the
 * URL (`models/{id}:generateContent`): `gemini/gemini-test/../gemini-pro` used to reach `models/gemini-pro`
 * (and `../tunedModels/...` another resource) with the owner's credential, past a key whose `model:` scope
 * allowed only `gemini/gemini-test*`. Every entry point now answers 400 `invalid_model` before any upstream
 * call: OpenAI chat, the Gemini-native routes (with and without `models/`, encoded and raw `..`), image
 * generation, the Responses WebSocket, the MCP chat tool, and a combo naming such an id. A valid id still
 * reaches the mock at exactly `models/<id>`.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocket } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
/** A key allowed only `gemini/gemini-test*` (and the MCP server, which needs manage). */
let scoped: string;

const BAD = ['gemini/gemini-test/../gemini-pro', 'gemini/gemini-test/../../tunedModels/x', 'gemini/gemini-test%2F..%2Fgemini-pro', 'gemini/gemini-test:countTokens'];

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'gemini', apiKey: 'AIza-owner' },
    { provider: 'openai', apiKey: 'sk-owner' },
  ]);
  const k = await env.router.manage('POST', '/api/keys', { name: 'scoped', scopes: ['proxy', 'manage', 'model:gemini/gemini-test*'] });
  expect(k.status).toBe(201);
  scoped = k.json.key;
}, 60_000);
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

const headers = () => ({ authorization: `Bearer ${scoped}`, 'content-type': 'application/json' });

async function post(path: string, body: unknown, key = scoped): Promise<{ status: number; json: any }> {
  const r = await fetch(`${env.router.url}${path}`, { method: 'POST', headers: { ...headers(), authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json().catch(() => null) };
}

/** A POST whose path is sent byte for byte (fetch would resolve `..` before sending). */
function rawPost(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const url = new URL(env.router.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'POST', headers: headers() }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function expectInvalid(r: { status: number; json: any }, what: string): void {
  expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBe(400);
  expect(r.json.error.message).toMatch(/Invalid model/);
}

/** The Gemini-native error body carries the standard fields plus Google's status. */
function expectNoUpstreamCall(): void {
  expect(env.mock.requests.map((r) => r.path)).toEqual([]);
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const native = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };

describe('model ids are checked against the provider grammar on every entry point', () => {
  it('a valid Gemini id reaches the upstream as exactly one path segment', async () => {
    const r = await post('/v1/chat/completions', chat('gemini/gemini-test'));
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(env.mock.requests.map((q) => q.path)).toEqual(['/v1beta/models/gemini-test:generateContent']);
  });

  it('chat completions: 400 with the standard body, nothing sent upstream', async () => {
    for (const model of BAD) {
      const r = await post('/v1/chat/completions', chat(model));
      expectInvalid(r, model);
      expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_model', param: 'model' });
    }
    // The generic grammar: an id in the body may hold slashes, never a `..` part.
    expectInvalid(await post('/v1/chat/completions', chat('openai/gpt-4o/../o1'), env.key), 'openai ..');
    expectNoUpstreamCall();
  });

  it('Gemini-native routes: encoded and raw `..`, with and without models/', async () => {
    for (const path of [
      '/v1beta/models/gemini%2Fgemini-test%2F..%2Fgemini-pro:generateContent',
      '/v1beta/models/gemini/gemini-test/..%2F..%2FtunedModels%2Fx:generateContent',
      '/v1beta/models/gemini/gemini-test%2F..%2Fgemini-pro:countTokens',
    ]) {
      const r = await rawPost(path, native);
      expectInvalid(r, path);
    }
    // A literal `..` in the request path is resolved by the URL parser before routing: the model is then
    // `gemini/gemini-pro`, which the key's scope refuses (it sees the id the upstream would receive).
    for (const path of ['/v1beta/models/gemini/gemini-test/../gemini-pro:generateContent', '/v1beta/gemini/gemini-test/../gemini-pro:streamGenerateContent']) {
      const r = await rawPost(path, native);
      expect(r.status, path).toBe(403);
      // Google's error shape on Gemini routes: router's code and fields in the ErrorInfo of `details`.
      expect(r.json.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED', details: [{ reason: 'model_not_allowed', metadata: { model: 'gemini/gemini-pro' } }] });
    }
    expectNoUpstreamCall();
  });

  it('image generation', async () => {
    for (const model of ['gemini/gemini-test/../imagen-3.0-generate-002', 'gemini/gemini-test/../../tunedModels/x']) {
      expectInvalid(await post('/v1/images/generations', { model, prompt: 'a cat' }), model);
    }
    expectNoUpstreamCall();
  });

  it('the Responses WebSocket answers an error event', async () => {
    const ws = new WebSocket(`${env.router.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${scoped}` } } as any);
    const events: any[] = [];
    ws.onmessage = (m) => events.push(JSON.parse(String(m.data)));
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error('socket failed'));
    });
    ws.send(JSON.stringify({ type: 'response.create', model: 'gemini/gemini-test/../gemini-pro', input: 'hi' }));
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'error' || e.type === 'response.failed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    const failure = events.find((e) => e.type === 'error' || e.type === 'response.failed');
    expect(JSON.stringify(failure)).toMatch(/Invalid model/);
    expectNoUpstreamCall();
  });

  it('the MCP chat tool', async () => {
    const client = new Client({ name: 'model-ids', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${env.router.url}/api/mcp/stream`), { requestInit: { headers: { authorization: `Bearer ${scoped}` } } }));
    try {
      const r = await client.callTool({ name: 'chat', arguments: chat('gemini/gemini-test/../gemini-pro') });
      expect(r.isError).toBe(true);
      expect((r.content as Array<{ text: string }>)[0]!.text).toMatch(/Invalid model/);
    } finally {
      await client.close();
    }
    expectNoUpstreamCall();
  });

  it('a combo cannot name such an id', async () => {
    const r = await env.router.manage('POST', '/api/combos', { name: 'escape', models: ['gemini/gemini-test/../gemini-pro'] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_model', param: 'models.0' });
  });
});
