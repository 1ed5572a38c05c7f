/**
 * Real replies of the observability, eval and live routes parse with the reply schema their route declares
 * (test/support/reply-contract.ts), on a real daemon with one connection on the mock upstream: a captured
 * translation, a session, traffic to spread, an eval run to its end, the live WebSocket opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { type CheckOptions, checkReply, checkWebSocket } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  key = (await checkReply(router, 'POST', '/api/keys', { name: 'observability', scopes: ['proxy'] }, { status: 201 })).key;
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

/** One chat request through the proxy as an Anthropic client (so the translator records a translation). */
async function anthropicCall(session: string): Promise<void> {
  const res = await fetch(`${router.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-router-session': session },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status, await res.text()).toBe(200);
}

describe('observability, eval and live replies parse with their route schema', () => {
  it('translator history, sessions, diversity', async () => {
    await check('PATCH', '/api/settings', { captureTraffic: true });
    await anthropicCall('contract-session');
    await anthropicCall('contract-session');
    const history = await check('GET', '/api/translator/history?limit=1');
    expect(history.entries).toHaveLength(1);
    expect(history.nextCursor).not.toBeNull();
    await check('GET', `/api/translator/history?cursor=${history.nextCursor}`);
    const sessions = await check('GET', '/api/sessions?perSession=1');
    expect(sessions.sessions[0].sessionId).toBe('contract-session');
    await check('GET', '/api/sessions/contract-session?limit=1');
    for (const by of ['provider', 'model', 'account']) await check('GET', `/api/analytics/diversity?by=${by}&metric=tokens`);
  });

  it('storage health and vacuum', async () => {
    await check('POST', '/api/db-backups');
    await check('POST', '/api/storage/vacuum');
    const health = await check('GET', '/api/storage/health');
    expect(health.lastVacuum).not.toBeNull();
    expect(health.lastBackup).not.toBeNull();
  });

  it('CLI-tool change log', async () => {
    await check('POST', '/api/cli-tools/logs', { tool: 'claude-code', action: 'apply', files: [{ path: '/tmp/x/settings.json', action: 'modified' }], backup: '/tmp/x.bak', model: 'openai/gpt-4o-mini' }, { status: 201 });
    await check('POST', '/api/cli-tools/logs', { tool: 'claude-code', action: 'undo', files: [] }, { status: 201 });
    const page = await check('GET', '/api/cli-tools/logs?limit=1');
    expect(page.nextCursor).not.toBeNull();
  });

  it('evals', async () => {
    const ev = await check(
      'POST',
      '/api/evals',
      {
        name: 'contract',
        models: ['openai/gpt-4o-mini'],
        cases: [
          { name: 'says', prompt: 'hi', checks: [{ type: 'contains', value: 'a', ignoreCase: true }, { type: 'regex', value: '.', flags: 'i' }] },
          { system: 'Answer JSON.', prompt: 'json', checks: [{ type: 'json-valid' }, { type: 'equals', value: 'x' }] },
        ],
      },
      { status: 201 },
    );
    await check('GET', '/api/evals');
    const run = await check('POST', `/api/evals/${ev.id}/run`, { wait: true }, { status: 200 });
    expect(run.results.length).toBe(2);
    await check('GET', `/api/evals/${ev.id}/runs/${run.id}`);
    await check('GET', `/api/evals/${ev.id}`);
    await check('GET', '/api/evals');
    const started = await check('POST', `/api/evals/${ev.id}/run`, {}, { status: 202 });
    const deadline = Date.now() + 10_000;
    while ((await check('GET', `/api/evals/${ev.id}/runs/${started.id}`)).status === 'running' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await check('DELETE', `/api/evals/${ev.id}`, undefined, { status: 204 });
  });

  it('live WebSocket', async () => {
    const ws = await checkWebSocket(router, '/api/live');
    ws.close();
  });
});
