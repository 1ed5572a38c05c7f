/**
 * Router as an A2A agent, driven by the `@a2a-js/sdk` client against a real daemon and a mock upstream:
 * the card, message/send, message/stream (SSE), tasks/get and tasks/cancel (v0.3 names, through the SDK's
 * legacy JSON-RPC transport) and the v1.0 methods (through ClientFactory from the card). Tasks persist
 * across a restart; usage rows name the caller's key; another key cannot read the task.
 */
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let keyId: string;
let key: string;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-mock' }]);
  const k = await env.router.manage('POST', '/api/keys', { name: 'a2a-client', scopes: ['manage'] });
  key = k.json.key;
  keyId = k.json.id;
  expect((await env.router.manage('PATCH', '/api/settings', { agents: { a2aModel: 'openai/gpt-4o' } })).status).toBe(200);
}, 60_000);
afterAll(() => env?.stop());

const authed = (k: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${k}`);
  return fetch(input, { ...init, headers });
};

const userMessage = (text: string, taskId = ''): Message => ({
  messageId: crypto.randomUUID(),
  contextId: '',
  taskId,
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const sendParams = (m: Message) => ({ tenant: '', message: m, configuration: undefined, metadata: undefined });
const textOf = (parts: Task['artifacts'][number]['parts'] | undefined) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

async function legacyClient(k = key): Promise<Client> {
  const res = await fetch(`${env.router.url}/.well-known/agent.json`);
  const card = parseLegacyAgentCard(await res.json());
  return new Client(new LegacyJsonRpcTransport({ endpoint: `${env.router.url}/api/a2a`, fetchImpl: authed(k) }), card);
}

describe('A2A agent', () => {
  it('serves the agent card at both well-known paths (v0.3 by default, v1.0 on request)', async () => {
    const legacy = await (await fetch(`${env.router.url}/.well-known/agent-card.json`)).json();
    expect(legacy).toMatchObject({ protocolVersion: '0.3.0', name: 'router', url: `${env.router.url}/api/a2a`, preferredTransport: 'JSONRPC', capabilities: { streaming: true } });
    expect(await (await fetch(`${env.router.url}/.well-known/agent.json`)).json()).toEqual(legacy);
    const v1 = await (await fetch(`${env.router.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(v1.supportedInterfaces).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: `${env.router.url}/api/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }),
        expect.objectContaining({ protocolVersion: '0.3' }),
      ]),
    );
  });

  it('message/send answers with the configured model; tasks/get reads the persisted task; usage names the key', async () => {
    const client = await legacyClient();
    const before = env.mock.requests.length;
    env.mock.enqueue({ type: 'text', text: 'Paris.' });
    const result = await client.sendMessage(sendParams(userMessage('Capital of France?')));
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.artifacts[0]?.parts)).toBe('Paris.');
    const sent = env.mock.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.json.model).toBe('gpt-4o');
    expect(sent[0]!.body).toContain('Capital of France?');

    const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.history.map((m) => m.role)).toContain(Role.ROLE_USER);
    expect(textOf(got.artifacts[0]?.parts)).toBe('Paris.');

    const logs = await env.router.manage('GET', `/api/logs?key=${keyId}`);
    expect(logs.json.logs[0]).toMatchObject({ endpoint: 'a2a', apiKeyId: keyId, status: 200 });

    // Another caller does not see the task.
    const other = await env.router.manage('POST', '/api/keys', { name: 'other-a2a', scopes: ['manage'] });
    const stranger = await legacyClient(other.json.key);
    await expect(stranger.getTask({ tenant: '', id: task.id, historyLength: undefined })).rejects.toThrow(/not found/i);
  });

  it('message/stream streams the task events over SSE', async () => {
    const client = await legacyClient();
    env.mock.enqueue({ type: 'text', text: 'Streamed answer.' });
    const kinds: string[] = [];
    let last: any;
    for await (const ev of client.sendMessageStream(sendParams(userMessage('Stream please')))) {
      const e = ev as any;
      kinds.push(e.payload?.$case ?? Object.keys(e)[0]);
      last = e;
    }
    expect(kinds[0]).toBe('task');
    expect(kinds).toContain('artifactUpdate');
    expect(kinds.at(-1)).toBe('statusUpdate');
    expect(last.payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('tasks/cancel cancels a task while the model is still answering', async () => {
    const client = await legacyClient();
    env.mock.enqueue({ type: 'delay', ms: 1500, then: { type: 'text', text: 'too late' } });
    const stream = client.sendMessageStream(sendParams(userMessage('Take your time')));
    let taskId = '';
    for await (const ev of stream) {
      const e = ev as any;
      if (e.payload?.$case === 'task') taskId = e.payload.value.id;
      if (e.payload?.$case === 'statusUpdate' && e.payload.value.status.state === TaskState.TASK_STATE_WORKING) break;
    }
    expect(taskId).not.toBe('');
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await new Promise((r) => setTimeout(r, 2000));
    const got = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(got.artifacts).toEqual([]);
  });

  it('the v1.0 client (ClientFactory from the card) sends a message and reads the task', async () => {
    const fetchImpl = authed(key);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    const client = await factory.createFromUrl(env.router.url);
    env.mock.enqueue({ type: 'text', text: 'v1 answer' });
    const task = (await client.sendMessage(sendParams(userMessage('hello v1')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(textOf(got.artifacts[0]?.parts)).toBe('v1 answer');
  });

  it('is a management route (CONTRACT): the CLI token and a manage key get in, a proxy-only key and no credential do not', async () => {
    const rpc = (headers: Record<string, string>) =>
      fetch(`${env.router.url}/api/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'no-such-task' } }) });
    const anon = await rpc({});
    expect(anon.status).toBe(401);
    expect((await anon.json()).error).toMatchObject({ type: 'authentication_error' });
    const proxyOnly = await env.router.manage('POST', '/api/keys', { name: 'a2a-proxy-only', scopes: ['proxy'] });
    const refused = await rpc({ authorization: `Bearer ${proxyOnly.json.key}` });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toMatch(/manage/);
    // Management credentials reach the JSON-RPC handler (an unknown task is its own answer, not an auth error).
    const management: Record<string, string>[] = [{ 'x-router-cli-token': env.router.cliToken }, { authorization: `Bearer ${key}` }];
    for (const headers of management) {
      const r = await rpc(headers);
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect((await r.json()).error.code).toBe(-32001);
    }
  });

  it('a missing model setting fails the task with a message', async () => {
    const bad = await fetch(`${env.router.url}/api/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: '{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}' });
    expect(bad.status).toBe(200);
    expect((await bad.json()).error.code).toBe(-32601);
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { a2aModel: '' } })).status).toBe(200);
    const client = await legacyClient();
    const task = (await client.sendMessage(sendParams(userMessage('anyone?')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status?.message?.parts)).toMatch(/agents\.a2aModel/);
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { a2aModel: 'openai/gpt-4o' } })).status).toBe(200);
  });
});

describe('A2A tasks persist', () => {
  it('a task is still readable after a restart', async () => {
    const router = await startRouter({ keepHome: true });
    try {
      const k = await router.manage('POST', '/api/keys', { name: 'p', scopes: ['manage'] });
      // No model configured: the task fails at once, but it is a task all the same.
      const client = new Client(new LegacyJsonRpcTransport({ endpoint: `${router.url}/api/a2a`, fetchImpl: authed(k.json.key) }), parseLegacyAgentCard(await (await fetch(`${router.url}/.well-known/agent.json`)).json()));
      const task = (await client.sendMessage(sendParams(userMessage('persist me')))) as Task;
      await router.stop();
      const again = await startRouter({ home: router.home });
      try {
        const c2 = new Client(new LegacyJsonRpcTransport({ endpoint: `${again.url}/api/a2a`, fetchImpl: authed(k.json.key) }), parseLegacyAgentCard(await (await fetch(`${again.url}/.well-known/agent.json`)).json()));
        const got = await c2.getTask({ tenant: '', id: task.id, historyLength: undefined });
        expect(got.id).toBe(task.id);
        expect(got.status?.state).toBe(TaskState.TASK_STATE_FAILED);
        expect(got.history.length).toBeGreaterThan(0);
      } finally {
        await again.stop();
        rmSync(router.home, { recursive: true, force: true });
      }
    } catch (err) {
      await router.stop().catch(() => {});
      throw err;
    }
  }, 60_000);
});
