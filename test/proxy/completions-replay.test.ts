/**
 * Legacy completions forwarded natively (issue 14, native legacy completions): each recorded OpenAI
 * `/v1/completions` interaction (basic, streaming, streaming with usage, batched text prompts with n > 1,
 * suffix, token prompts, token batches) replayed through router to an upstream that speaks `/completions`
 * reaches the upstream as the client sent it (model id aside) and comes back equal to the direct reply.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { loadRecording } from '../mocks/recordings.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-completions-replay-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = (await services.keys.create('caller', ['proxy'])).key;
  const res = await app.request(
    'http://router.test/api/providers',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken },
      body: JSON.stringify({ provider: 'openai', apiKey: 'sk-openai-replay', providerSpecificData: { baseUrl: mock.openaiBase } }),
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

const FIXTURES = ['basic', 'streaming', 'streaming-usage', 'text-batch', 'suffix', 'token', 'token-batch'].map((n) => `openai/completion-${n}.yaml`);

describe.each(FIXTURES)('%s', (file) => {
  it('through router equals the direct reply, and the upstream gets the request as sent', async () => {
    const [recorded] = loadRecording(file);
    const sent = JSON.parse(recorded!.request.body!) as Record<string, unknown>;
    // Direct: the client talking to the upstream itself.
    mock.enqueue({ type: 'replay', file });
    const direct = await fetch(`${mock.openaiBase}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: recorded!.request.body });
    const directText = await direct.text();
    // Through router, with the provider prefix on the model.
    mock.enqueue({ type: 'replay', file, chunkBytes: 7 });
    const res = await app.request(
      'http://router.test/v1/completions',
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ ...sent, model: `openai/${sent.model}` }) },
      { remoteAddress: '127.0.0.1' },
    );
    const text = await res.text();
    expect(res.status).toBe(direct.status);
    expect(text).toBe(directText);
    const upstream = mock.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/completions');
    expect(upstream.json).toEqual(sent);
  });
});

/**
 * With request stages on (here guardrails redacting secrets), the request goes through IR and back out
 * through the legacy completions upstream codec: it still reaches `/v1/completions` (never Chat
 * Completions), with the prompt the stage rewrote and the legacy-only fields (suffix), and the recorded
 * reply comes back as a text_completion with the upstream's own text and usage.
 */
describe('with request stages on (guardrails)', () => {
  const SECRET = 'sk-proj-Zx81KqPmW4vT7nR2sY6uH0jL3gF9dC5bA1eQ8oI2wU4yT6rE0pS3aD7fG9hJ';
  const manage = (method: string, path: string, body: unknown) =>
    app.request(
      `http://router.test${path}`,
      { method, headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken }, body: JSON.stringify(body) },
      { remoteAddress: '127.0.0.1' },
    );
  beforeAll(async () => {
    expect((await manage('PUT', '/api/guardrails', { secrets: { mode: 'redact' } })).status).toBe(200);
  });
  afterAll(async () => {
    await manage('PUT', '/api/guardrails', {});
  });
  const send = (body: Record<string, unknown>) =>
    app.request(
      'http://router.test/v1/completions',
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) },
      { remoteAddress: '127.0.0.1' },
    );
  const recordedReply = (file: string) => {
    const [recorded] = loadRecording(file);
    return { sent: JSON.parse(recorded!.request.body!) as Record<string, unknown>, body: recorded!.response.body! };
  };

  it('JSON: suffix and the redacted prompt reach /v1/completions; the text and usage come back', async () => {
    const file = 'openai/completion-suffix.yaml';
    const { sent, body } = recordedReply(file);
    const reply = JSON.parse(body) as { choices: Array<{ text: string }>; usage: Record<string, number> };
    mock.enqueue({ type: 'replay', file });
    const prompt = `# key: ${SECRET}\n${sent.prompt as string}`;
    const res = await send({ model: `openai/${sent.model}`, prompt, suffix: sent.suffix, max_tokens: 25, stop: sent.stop });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const upstream = mock.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/completions');
    const got = upstream.json as Record<string, unknown>;
    expect(got.prompt).toBe(`# key: [REDACTED:openai_key]\n${sent.prompt as string}`);
    expect(got).toMatchObject({ model: sent.model, suffix: sent.suffix, max_tokens: 25, stop: sent.stop });
    expect(got).not.toHaveProperty('messages');
    const out = JSON.parse(text);
    expect(out.object).toBe('text_completion');
    expect(out.choices[0].text).toBe(reply.choices[0]!.text);
    expect(out.usage).toEqual({ prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens, total_tokens: reply.usage.total_tokens });
  });

  it('streaming: the upstream is asked for usage; the client gets the recorded text and usage chunk', async () => {
    const file = 'openai/completion-streaming-usage.yaml';
    const { sent, body } = recordedReply(file);
    const chunks = body
      .split('\n\n')
      .map((l) => l.replace(/^data: /, ''))
      .filter((l) => l && l !== '[DONE]')
      .map((l) => JSON.parse(l) as { choices: Array<{ text: string }>; usage: unknown });
    const recordedText = chunks.flatMap((c) => c.choices.map((ch) => ch.text)).join('');
    mock.enqueue({ type: 'replay', file, chunkBytes: 11 });
    const res = await send({ ...sent, model: `openai/${sent.model}` });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const upstream = mock.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/completions');
    expect(upstream.json).toMatchObject({ prompt: sent.prompt, stream: true, stream_options: { include_usage: true } });
    const events = text
      .split('\n\n')
      .map((l) => l.replace(/^data: /, ''))
      .filter(Boolean);
    expect(events.at(-1)).toBe('[DONE]');
    const parsed = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: Array<{ text: string }>; usage?: unknown });
    expect(parsed.every((p) => p.object === 'text_completion')).toBe(true);
    expect(parsed.flatMap((p) => p.choices.map((c) => c.text)).join('')).toBe(recordedText);
    expect(parsed.at(-1)!.usage).toEqual(chunks.at(-1)!.usage);
  });

  it('n > 1 is refused with a 400 that says why (stages handle one completion)', async () => {
    const res = await send({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'hi', n: 2 });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/request stages .* one completion/);
  });
});
