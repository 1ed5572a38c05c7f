/**
 * Issue 27 item 12: say what failed. An upstream refusing a connection's credential is named (provider and
 * connection, 502 `upstream_auth_failed`), never passed on as a 401 the client would read as its own key;
 * an unknown or bare model name gets "did you mean"; a provider whose model circuit is open is never shown
 * as closed; CLI messages name commands, not HTTP routes, and "the daemon failed" only for a 500. The real
 * CLI and daemon, mock upstreams (one refusing every key but its own).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerLines } from '../../src/cli/tui/dashboard-text.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { describeResult, runRouter } from '../support/cli.js';
import { chatAs, startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let strict: MockUpstream;
let open: MockUpstream;
let key: string;

const R = (...args: string[]) => runRouter([...args, '--home', router.home, '--port', String(router.port)]);

const chat = (model: string) => chatAs(router.url, key, model);

beforeAll(async () => {
  strict = await startMockUpstream({ requireKey: 'sk-the-right-one' });
  open = await startMockUpstream();
  router = await startRouter();
  await router.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-a-wrong-one', providerSpecificData: { baseUrl: strict.openaiBase } });
  await router.addConnection({ provider: 'groq', name: 'fast', apiKey: 'gsk-any', providerSpecificData: { baseUrl: open.openaiBase } });
  key = await router.createKey();
}, 30_000);

afterAll(async () => {
  await router?.stop();
  await strict?.close();
  await open?.close();
});

describe('an upstream credential rejection names the provider and the connection', () => {
  it('the openai SDK gets a 502 upstream_auth_failed, not a 401 about its own key', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).not.toBeInstanceOf(OpenAI.AuthenticationError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_auth_failed');
    expect(e.message).toMatch(/^502 upstream openai \(connection 'work'\) rejected its credential: \[invalid_api_key\]: Incorrect API key/);
    expect(e.message).not.toContain('sk-a-wrong-one');
  });

  it('router models test says the same, and not "the daemon failed"', async () => {
    // The refusal was confirmed (the model list refused the key too): the connection was switched off.
    const work = async () => (await router.manage('GET', '/api/providers')).json.connections.find((c: any) => c.name === 'work');
    const deadline = Date.now() + 10_000;
    while ((await work()).isActive && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await router.manage('PUT', `/api/providers/${(await work()).id}`, { isActive: true })).status).toBe(200);
    const r = await R('models', 'test', 'openai/gpt-4o');
    expect(r.exitCode, describeResult(r)).toBe(1);
    expect(`${r.stdout}${r.stderr}`).toContain("upstream openai (connection 'work') rejected its credential");
    expect(`${r.stdout}${r.stderr}`).not.toContain('the daemon failed');
  });
});

describe('an unknown or bare model name gets "did you mean"', () => {
  it.each([
    ['gpt-4o', '`openai/gpt-4o`'],
    ['opnai/gpt-4o', '`openai/gpt-4o`'],
    ['groq/llama-3.3-70b-versatile', null],
    ['claude-sonnet-4-5', '`anthropic/claude-sonnet-4-5`'],
  ])('%s', async (model, hint) => {
    const r = await chat(model);
    if (hint === null) {
      expect(r.status).toBe(200);
      return;
    }
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('model_not_found');
    expect(r.json.error.message).toContain(`Did you mean ${hint}`);
  });

  it('the CLI says it too, naming `router models` rather than a route', async () => {
    const t = await R('models', 'test', 'gpt-4o');
    expect(t.exitCode).toBe(1);
    // (openai's only connection was switched off above, so copilot's gpt-4o is as close.)
    expect(t.stderr).toMatch(/^router: Unknown model 'gpt-4o': use <provider>\/<model> or a combo name \(`router models` lists them\)\. Did you mean `openai\/gpt-4o`( or `github-copilot\/gpt-4o`)?\?$/);
    const c = await R('combos', 'add', 'mine', '--model', 'opnai/gpt-4o');
    expect(c.exitCode).toBe(2);
    expect(c.stderr).toContain('Did you mean `openai/gpt-4o`?');
  });
});

describe('a provider with an open model circuit is not shown as closed', () => {
  it('router providers list and the TUI dashboard say "1 model open"', async () => {
    expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 1 })).status).toBe(200);
    open.enqueue({ type: 'status', status: 500, message: 'boom' });
    expect((await chat('groq/llama-3.3-70b-versatile')).status).toBe(500);
    const list = await R('providers', 'list');
    expect(list.exitCode, describeResult(list)).toBe(0);
    const row = list.stdout.split('\n').find((l) => /\bfast\b/.test(l))!;
    expect(row).toContain('1 model open');
    expect(row).not.toMatch(/\bclosed\b/);
    const resilience = (await router.manage('GET', '/api/resilience')).json;
    const connections = (await router.manage('GET', '/api/providers')).json.connections;
    const groq = providerLines(connections, resilience, new Map(), Date.now()).find((p) => p.provider === 'groq')!;
    expect(groq.circuit).toBe('1 model open');
    expect((await router.manage('POST', '/api/resilience/reset', {})).status).toBe(200);
    expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 5 })).status).toBe(200);
  });
});
