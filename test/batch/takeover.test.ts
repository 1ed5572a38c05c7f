/**
 * Issue 29 item 4 / CONTRACT "Cluster mode": a batch job whose node dies is resumed by another node without
 * resending finished lines. Two in-process nodes (bootServices, their own state folders and node ids) share
 * one real PostgreSQL 15 for their batches, files and leases; lines go through each node's real pipeline to
 * the mock OpenAI upstream. Node A dies mid-batch (its runs stop, its database connections close, its lease
 * is left to lapse); node B takes the batch over, reading A's uploaded file from the database, and sends only
 * the lines A had not recorded. A cancel asked of B stops the batch A runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlFileContents } from '../../src/daemon/batches/contents.js';
import { SqlBatchLeases } from '../../src/daemon/batches/leases.js';
import { SqlBatchRepository } from '../../src/daemon/batches/sql-repository.js';
import { BatchService } from '../../src/daemon/batches/service.js';
import { bootServices, buildApp, closeServices, lineRoutes } from '../../src/daemon/boot.js';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import type { KeyRecord } from '../../src/daemon/keys/store.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import type { Services } from '../../src/daemon/services.js';
import { migratePostgres } from '../../src/daemon/store/pg-migrate.js';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../support/postgres.js';
import { chatLine, jsonl, userText } from './helpers.js';

const LEASE_MS = 1500;
const pgMissing = postgresUnavailable();

interface Node {
  id: string;
  home: string;
  services: Services;
  app: ReturnType<typeof buildApp>;
  driver: PostgresDriver;
}

let server: PostgresServer | undefined;
let mock: MockUpstream;
let url: string;
let observer: PostgresDriver;
const nodes: Node[] = [];
/** The API key of the batches' owner, known to every node (a cluster shares its keys table). */
let owner: { key: string; record: KeyRecord } | undefined;

async function startNode(id: string): Promise<Node> {
  const home = mkdtempSync(join(tmpdir(), `router-takeover-${id}-`));
  const services = await bootServices({ home, host: '127.0.0.1', port: 0, env: { ROUTER_NODE_ID: id } });
  const app = buildApp(services);
  const node: Node = { id, home, services, app, driver: new PostgresDriver({ url, max: 4 }) };
  nodes.push(node);
  const r = await send(node, 'POST', '/api/providers', { provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect(r.status, r.text).toBe(201);
  await send(node, 'PATCH', '/api/settings', { batchConcurrency: 4 });
  if (!owner) {
    const created = await services.keys.create('batches', ['proxy']);
    owner = { key: created.key, record: services.keys.get(created.id)! };
  } else {
    await new SqlKeyRepository(new SqliteDriver(services.db)).insert(owner.record);
    await services.keys.reload();
  }
  // The batches of this node live in the shared database (what cluster mode's boot gives them).
  services.batches.close();
  services.batches = new BatchService({
    repo: new SqlBatchRepository(node.driver),
    contents: new SqlFileContents(node.driver),
    leases: new SqlBatchLeases(node.driver, id, LEASE_MS),
    concurrency: () => services.settings.get().batchConcurrency,
    deps: { ...services, routes: lineRoutes(() => services) },
  });
  await services.batches.resume();
  return node;
}

async function send(node: Node, method: string, path: string, body?: unknown, asOwner = false) {
  let payload: { body: string | ArrayBuffer; type: string } | undefined;
  if (body instanceof FormData) {
    const encoded = new Request('http://form.invalid', { method: 'POST', body });
    payload = { body: await encoded.arrayBuffer(), type: encoded.headers.get('content-type')! };
  } else if (body !== undefined) payload = { body: JSON.stringify(body), type: 'application/json' };
  const res = await node.app.request(
    `http://router.test${path}`,
    {
      method,
      headers: {
        ...(asOwner ? { authorization: `Bearer ${owner!.key}` } : { 'x-router-cli-token': node.services.cliToken }),
        ...(payload ? { 'content-type': payload.type } : {}),
      },
      body: payload?.body,
    },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** Node A dies: its runs stop where they are, nothing more reaches the database from it, its lease stays. */
async function kill(node: Node): Promise<void> {
  node.services.batches.close();
  await node.driver.close();
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function createBatch(node: Node, count: number, tag: string) {
  const lines = Array.from({ length: count }, (_, i) => chatLine(`${tag}-${i}`, 'openai/gpt-4o-mini', `${tag} ${i}`));
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([jsonl(lines)]), `${tag}.jsonl`);
  const file = await send(node, 'POST', '/v1/files', form, true);
  expect(file.status, file.text).toBe(200);
  const batch = await send(node, 'POST', '/v1/batches', { input_file_id: file.json.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, true);
  expect(batch.status, batch.text).toBe(200);
  return { id: batch.json.id as string, lines };
}

const sentPerText = () => {
  const counts = new Map<string, number>();
  for (const r of mock.requests) if (r.endpoint === 'openai.chat') counts.set(userText(r.json)!, (counts.get(userText(r.json)!) ?? 0) + 1);
  return counts;
};

beforeAll(async () => {
  if (pgMissing) return;
  server = await startPostgres();
  url = await server.createDatabase();
  observer = new PostgresDriver({ url, max: 2 });
  await migratePostgres(observer);
  mock = await startMockUpstream();
  mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 40, then: { type: 'text', text: `done: ${userText(req.json)}` } } : undefined));
}, 90_000);

afterAll(async () => {
  for (const n of nodes) {
    n.services.batches.close();
    await n.driver.close().catch(() => undefined);
    closeServices(n.services);
    rmSync(n.home, { recursive: true, force: true });
  }
  await observer?.close();
  await mock?.close();
  await server?.stop();
}, 30_000);

describe.skipIf(pgMissing)(`a dead node's batch is resumed by another${pgMissing ? ` (skipped: ${pgMissing})` : ''}`, () => {
  it('node B takes over once A\'s lease lapses and sends only the lines A had not recorded', async () => {
    const a = await startNode('node-a');
    const b = await startNode('node-b');
    const { id, lines } = await createBatch(a, 150, 'take');
    await waitFor('40 lines done on A', async () => ((await send(b, 'GET', `/api/batches/${id}`)).json.request_counts.completed >= 40 ? true : undefined));
    await kill(a);
    // What A had committed when it died: those lines must never be asked again.
    await new Promise((r) => setTimeout(r, 200));
    const doneBefore = (await observer.query<{ line: number }>('SELECT line FROM batch_lines WHERE batch_id = ?', [id])).map((r) => r.line);
    const lease = await observer.query<{ node_id: string }>('SELECT node_id FROM batch_leases WHERE batch_id = ?', [id]);
    expect(lease).toEqual([{ node_id: 'node-a' }]);
    expect(doneBefore.length).toBeGreaterThanOrEqual(40);
    expect(doneBefore.length).toBeLessThan(150);
    const killedAt = Date.now();

    const done = await waitFor('the batch to complete on B', async () => {
      const r = await send(b, 'GET', `/api/batches/${id}`);
      return r.json.status === 'completed' ? r.json : undefined;
    });
    // Taken over after the lease (1.5 s) and its grace (0.5 s) lapsed, within a lease round more.
    expect(Date.now() - killedAt).toBeGreaterThan(LEASE_MS / 2);
    expect(done.request_counts).toEqual({ total: 150, completed: 150, failed: 0 });

    const perLine = sentPerText();
    for (const line of doneBefore) expect(perLine.get(`take ${line}`), `line ${line}`).toBe(1);
    expect(lines.every((_, i) => perLine.has(`take ${i}`))).toBe(true);
    // Only what was in flight on A when it died (at most its concurrency) was asked twice.
    expect([...perLine.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(4);

    // The output file B wrote is served by B (and would be by any node): every line once, in input order.
    const output = await send(b, 'GET', `/v1/files/${done.output_file_id}/content`, undefined, true);
    expect(output.status).toBe(200);
    const outLines = output.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(outLines.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(outLines[149].response.body.choices[0].message.content).toBe('done: take 149');
    // The batch ended: its lease is gone.
    expect(await observer.query('SELECT node_id FROM batch_leases WHERE batch_id = ?', [id])).toEqual([]);
  }, 120_000);

  it('a cancel asked of one node stops the batch another node runs; a graceful stop hands a batch over at once', async () => {
    const c = await startNode('node-c');
    const d = await startNode('node-d');
    const { id } = await createBatch(c, 400, 'cancel');
    await waitFor('some lines done on C', async () => ((await send(d, 'GET', `/api/batches/${id}`)).json.request_counts.completed >= 10 ? true : undefined));
    const asked = await send(d, 'POST', `/api/batches/${id}/cancel`, {});
    expect(asked.status).toBe(200);
    expect(asked.json.status).toBe('cancelling');
    const sentAtCancel = mock.requests.filter((r) => userText(r.json)?.startsWith('cancel ')).length;
    const ended = await waitFor('the batch to end cancelled', async () => {
      const r = await send(d, 'GET', `/api/batches/${id}`);
      return r.json.status === 'cancelled' ? r.json : undefined;
    }, 10_000);
    // C stopped within a lease round: far fewer lines than the batch has were sent after the cancel.
    const sentAfter = mock.requests.filter((r) => userText(r.json)?.startsWith('cancel ')).length - sentAtCancel;
    expect(sentAfter).toBeLessThan(100);
    expect(ended.request_counts.completed).toBeLessThan(400);

    // A graceful stop releases the lease: another node continues the next batch without waiting for it to lapse.
    const next = await createBatch(c, 300, 'drain');
    await waitFor('some lines done on C', async () => ((await send(d, 'GET', `/api/batches/${next.id}`)).json.request_counts.completed >= 10 ? true : undefined));
    await c.services.batches.drain(5000);
    const drainedAt = Date.now();
    // Another live node (D, or B of the test before) holds it.
    const holder = async () => (await observer.query<{ node_id: string }>('SELECT node_id FROM batch_leases WHERE batch_id = ?', [next.id]))[0]?.node_id;
    await waitFor('another node to hold the lease', async () => ((await holder()) ?? 'node-c') !== 'node-c' || (await send(d, 'GET', `/api/batches/${next.id}`)).json.status === 'completed' ? true : undefined);
    expect(Date.now() - drainedAt).toBeLessThan(LEASE_MS);
    const finished = await waitFor('the batch to complete on another node', async () => {
      const r = await send(d, 'GET', `/api/batches/${next.id}`);
      return r.json.status === 'completed' ? r.json : undefined;
    });
    expect(finished.request_counts).toEqual({ total: 300, completed: 300, failed: 0 });
    const perLine = sentPerText();
    // Drained: the lines in flight finished and were recorded, so no line was sent twice.
    for (let i = 0; i < 300; i++) expect(perLine.get(`drain ${i}`), `line ${i}`).toBe(1);
  }, 120_000);
});
