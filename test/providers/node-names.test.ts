/**
 * Names, not ids, in everything a person reads (CONTRACT "Wave two"): a provider node appears as its prefix
 * in request logs, usage and analytics, events and webhook payloads, the management lists the CLI shows,
 * and CLI output; filters accept the prefix; the stored id stays available as providerId / provider_id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { runRouter } from '../support/cli.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';

let mock: MockUpstream;
let router: RouterProcess;
let rx: Receiver;
let key: string;
let nodeId: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  rx = await startReceiver();
  router = await startRouter();
  key = await router.createKey();
  expect((await router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true })).status).toBe(200);
  expect((await router.manage('POST', '/api/webhooks', { url: rx.url, events: ['request.completed'] })).status).toBe(201);
  const node = await router.manage('POST', '/api/provider-nodes', { name: 'My box', prefix: 'mybox', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(node.status).toBe(201);
  nodeId = node.json.id;
  await router.addConnection({ provider: 'mybox', apiKey: 'sk-node-key-0123456789' });
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mybox/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status, await res.text()).toBe(200);
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
  await rx?.close();
});

it('request logs, filters and analytics show the prefix; the id stays as providerId', async () => {
  for (const filter of ['mybox', nodeId]) {
    const { json } = await router.manage('GET', `/api/logs?provider=${filter}`);
    expect(json.logs, filter).toHaveLength(1);
    expect(json.logs[0]).toMatchObject({ provider: 'mybox', providerId: nodeId, model: 'gpt-4o' });
  }
  const byProvider = await router.manage('GET', '/api/usage/breakdown?by=provider');
  expect(byProvider.json.rows).toEqual([expect.objectContaining({ key: 'mybox', providerId: nodeId, requests: 1 })]);
  const byModel = await router.manage('GET', '/api/usage/breakdown?by=model');
  expect(byModel.json.rows).toEqual([expect.objectContaining({ key: 'mybox/gpt-4o', providerId: nodeId })]);
  const byConnection = await router.manage('GET', '/api/usage/breakdown?by=connection');
  expect(byConnection.json.rows[0].name).toBe('My box');
  const series = await router.manage('GET', '/api/usage/timeseries?bucket=minute&provider=mybox');
  expect(series.json.points.reduce((n: number, p: { requests: number }) => n + p.requests, 0)).toBe(1);
  const telemetry = await router.manage('GET', '/api/telemetry/summary');
  expect(telemetry.json.providers).toEqual([expect.objectContaining({ provider: 'mybox', providerId: nodeId })]);
});

it('webhook payloads name the node by prefix, with provider_id', async () => {
  await rx.waitFor(1);
  const body = JSON.parse(rx.requests[0]!.body);
  expect(body.event).toBe('request.completed');
  expect(body.data).toMatchObject({ provider: 'mybox', provider_id: nodeId, model: 'mybox/gpt-4o' });
});

it('connections and the catalog show the prefix', async () => {
  const { json } = await router.manage('GET', '/api/providers');
  expect(json.connections).toEqual([expect.objectContaining({ provider: 'mybox', providerId: nodeId })]);
  const models = await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json());
  for (const m of models.data as Array<{ id: string }>) expect(m.id).not.toContain(nodeId);
});

it('CLI output never shows the node UUID; --provider accepts the prefix', async () => {
  const at = ['--home', router.home, '--port', String(router.port)];
  for (const args of [['logs'], ['logs', '--provider', 'mybox'], ['usage', '--by', 'provider'], ['usage', '--by', 'model'], ['providers', 'list']]) {
    const r = await runRouter([...args, ...at]);
    expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    expect(r.stdout, args.join(' ')).toContain('mybox');
    expect(r.stdout, args.join(' ')).not.toContain(nodeId);
  }
});
