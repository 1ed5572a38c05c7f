/**
 * Agent surfaces on a real cluster (issue 29 item 2): two daemons on one real PostgreSQL 15. A skill
 * installed on node A is served by node B within 1 s (injected into B's requests for its key); an A2A task
 * created on node A is read (tasks/get) on node B; a task still being answered on A is canceled on B, A
 * stops (its caller is told the task is canceled) and the late answer never overwrites the cancel.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { Client } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterNodeProcess, type ClusterUnderTest } from '../support/cluster.js';

const missing = clusterUnavailable();
let cluster: ClusterUnderTest;
let mock: MockUpstream;
let key: string;

const textOf = (m: unknown) => JSON.stringify(m);

beforeAll(async () => {
  if (missing) return;
  mock = await startMockUpstream();
  // A message asking to take time is answered after 2.5 s; any other at once.
  mock.handle((req) => {
    if (req.endpoint !== 'openai.chat') return undefined;
    const slow = textOf(req.json).includes('take your time');
    const reply = { type: 'text' as const, text: slow ? 'too late' : 'Paris.' };
    return slow ? { type: 'delay', ms: 2500, then: reply } : reply;
  });
  cluster = await startCluster({ nodes: 2 });
  const [a, b] = cluster.nodes;
  await a!.addConnection({ provider: 'openai', apiKey: 'sk-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect((await a!.manage('PATCH', '/api/settings', { agents: { a2aModel: 'openai/gpt-4o' } })).status).toBe(200);
  key = await a!.createKey(['manage']);
  // The key, the connection and the setting reach B over the change feed.
  await until(async () => (await fetch(`${b!.url}/api/a2a`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })).status, (s) => s !== 401, 'the key on B');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await mock?.close();
}, 60_000);

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function clientOf(node: ClusterNodeProcess): Promise<Client> {
  const card = parseLegacyAgentCard(await (await fetch(`${node.url}/.well-known/agent.json`)).json());
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  return new Client(new LegacyJsonRpcTransport({ endpoint: `${node.url}/api/a2a`, fetchImpl }), card);
}

const userMessage = (text: string): Message => ({
  messageId: crypto.randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const sendParams = (m: Message) => ({ tenant: '', message: m, configuration: undefined, metadata: undefined });

describe.skipIf(missing)(`agent surfaces on two daemons and one PostgreSQL${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a skill installed on node A is served by node B within 1 s', async () => {
    const [a, b] = cluster.nodes;
    const proxyKey = await a!.createKey(['proxy']);
    const keyId = (await a!.manage('GET', '/api/keys')).json.keys?.find((k: { scopes: string[] }) => k.scopes.includes('proxy') && k.scopes.length === 1)?.id;
    expect(keyId).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'router-cluster-skill-'));
    try {
      mkdirSync(join(dir, 'shout'));
      writeFileSync(join(dir, 'shout', 'SKILL.md'), '---\nname: shout\ndescription: Answers in capitals\n---\nAlways answer in CAPITAL LETTERS.\n');
      await until(() => b!.manage('GET', '/api/keys'), (r) => r.json.keys?.some((k: { id: string }) => k.id === keyId), 'the key on B');
      const installed = await a!.manage('POST', '/api/skills', { path: join(dir, 'shout'), keys: [keyId] });
      expect(installed.status).toBe(201);
      const t0 = Date.now();
      await until(() => b!.manage('GET', '/api/skills'), (r) => r.json.skills?.some((s: { name: string }) => s.name === 'shout'), 'the skill on B', 1000);
      expect(Date.now() - t0).toBeLessThan(1000);
      const before = mock.requests.length;
      const res = await fetch(`${b!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      const sent = mock.requests.slice(before).find((r) => r.endpoint === 'openai.chat');
      expect(JSON.stringify(sent?.json)).toContain('Always answer in CAPITAL LETTERS.');
      expect((await b!.manage('GET', '/api/skills/shout')).json.body).toBe('Always answer in CAPITAL LETTERS.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an A2A task created on node A is read on node B', async () => {
    const [a, b] = cluster.nodes;
    const task = (await (await clientOf(a!)).sendMessage(sendParams(userMessage('Capital of France?')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const onB = await (await clientOf(b!)).getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(onB.id).toBe(task.id);
    expect(onB.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(onB.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'Paris.' });
    expect(onB.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
  });

  it('a task still answered on A is canceled on B: A tells its caller, and the late answer is dropped', async () => {
    const [a, b] = cluster.nodes;
    const stream = (await clientOf(a!)).sendMessageStream(sendParams(userMessage('Please take your time.')));
    let taskId = '';
    const states: TaskState[] = [];
    const it = stream[Symbol.asyncIterator]();
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      const e = value as { payload?: { $case: string; value: { id?: string; status?: { state: TaskState } } } };
      if (e.payload?.$case === 'task') taskId = e.payload.value.id ?? '';
      if (e.payload?.$case === 'statusUpdate') states.push(e.payload.value.status!.state);
      if (states.includes(TaskState.TASK_STATE_WORKING)) break;
    }
    expect(taskId).not.toBe('');
    const t0 = Date.now();
    const canceled = await (await clientOf(b!)).cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // A's stream ends with the cancel (heard over the change feed), well before the 2.5 s answer.
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      const e = value as { payload?: { $case: string; value: { status?: { state: TaskState } } } };
      if (e.payload?.$case === 'statusUpdate') states.push(e.payload.value.status!.state);
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(Date.now() - t0).toBeLessThan(2000);
    // After the upstream answered on A, the task is still canceled, on both nodes, without the answer.
    await new Promise((r) => setTimeout(r, 3000));
    for (const node of [a!, b!]) {
      const got = await (await clientOf(node)).getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(got.artifacts).toEqual([]);
    }
  });
});
