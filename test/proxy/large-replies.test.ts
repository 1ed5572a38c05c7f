/**
 * Non-streaming replies of any size reach the client (issue 16, item 1): chat, /v1/messages translated to
 * an OpenAI upstream, a 100 x 1,536 embeddings batch and large upstream error bodies, 256 KiB to 4 MB,
 * through the real daemon and the mock upstream. Before the reader's state machine, every reply past the
 * 256 KiB high-water mark hung until the client gave up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai' },
    { provider: 'anthropic', apiKey: 'sk-up-ant' },
  ]);
  ({ mock, router, key } = env);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

const KiB = 1024;
const SIZES = [256 * KiB, 1024 * KiB, 4 * 1024 * KiB];

/** A text of `bytes` ASCII characters, with words so that token estimates stay plausible. */
function bigText(bytes: number): string {
  return 'lorem ipsum '.repeat(Math.ceil(bytes / 12)).slice(0, bytes);
}

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}

describe('large non-streaming replies', () => {
  it.each(SIZES)('a %i-byte chat reply arrives whole (same format)', async (size) => {
    const text = bigText(size);
    mock.enqueue({ type: 'text', text });
    const client = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0, timeout: 20_000 });
    const r = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe(text);
  }, 30_000);

  it.each(SIZES)('a %i-byte reply to /v1/messages translated to an OpenAI upstream arrives whole', async (size) => {
    const text = bigText(size);
    mock.enqueue({ type: 'text', text });
    const client = new Anthropic({ apiKey: key, baseURL: router.url, maxRetries: 0, timeout: 20_000 });
    const m = await client.messages.create({ model: 'openai/gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(m.content[0]).toMatchObject({ type: 'text', text });
  }, 30_000);

  it('an embeddings batch of 100 inputs x 1,536 dimensions (~3 MB) arrives whole', async () => {
    const input = Array.from({ length: 100 }, (_, i) => `input number ${i}`);
    const res = await post('/v1/embeddings', { model: 'openai/text-embedding-3-small', input, dimensions: 1536, encoding_format: 'float' });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeGreaterThan(256 * KiB);
    const json = JSON.parse(text);
    expect(json.data).toHaveLength(100);
    for (const d of json.data) expect(d.embedding).toHaveLength(1536);
  }, 30_000);

  it.each(SIZES)('a %i-byte upstream error body ends the request with an error (chat and embeddings)', async (size) => {
    const body = { error: { message: bigText(size), type: 'server_error', code: null } };
    mock.enqueue({ type: 'status', status: 400, body });
    const chat = await post('/v1/chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(400);
    expect((await chat.json()).error.message).toEqual(expect.any(String));
    mock.enqueue({ type: 'status', status: 400, body });
    const emb = await post('/v1/embeddings', { model: 'openai/text-embedding-3-small', input: 'x' });
    expect(emb.status).toBe(400);
    expect((await emb.json()).error.message).toEqual(expect.any(String));
  }, 30_000);
});
