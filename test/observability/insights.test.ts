/**
 * The observability routes the dashboard shows, against the real daemon with real traffic through the mock
 * upstreams: translator history (off by default, on with traffic capture, bounded, credentials masked),
 * sessions (grouped by X-Router-Session, filters, paging), traffic diversity (shares, HHI, entropy,
 * buckets), storage health (sizes, row counts, backup, vacuum) and the config-tool change log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';
import { isolateCliConfig, run, show } from '../cli/helpers.js';

let env: ProxyEnv;
const UPSTREAM_OPENAI = 'sk-upstream-openai-0123456789';
const UPSTREAM_ANTHROPIC = 'sk-ant-upstream-0123456789';

beforeAll(async () => {
  env = await startProxyEnv(
    [
      { provider: 'openai', apiKey: UPSTREAM_OPENAI },
      { provider: 'anthropic', apiKey: UPSTREAM_ANTHROPIC },
    ],
    [{ prefix: 'local' }],
  );
});
afterAll(async () => {
  await env?.stop();
});

const manage = (method: string, path: string, body?: unknown) => env.router.manage(method, path, body);

async function chat(model: string, opts: { session?: string; stream?: boolean; extra?: Record<string, unknown> } = {}): Promise<string> {
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${env.key}`,
      'content-type': 'application/json',
      ...(opts.session ? { 'x-router-session': opts.session } : {}),
    },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Say hello.' }], stream: opts.stream ?? false, ...opts.extra }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return res.headers.get('x-router-trace-id')!;
}

async function anthropicMessage(model: string, stream: boolean): Promise<string> {
  const res = await fetch(`${env.router.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': env.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'Hi there.' }], stream }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return res.headers.get('x-router-trace-id')!;
}

function expectBadRequest(r: { status: number; json: any }, param?: string): void {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error' });
  expect(typeof r.json.error.message).toBe('string');
  if (param) expect(r.json.error.param).toBe(param);
}

describe('empty state and bad queries', () => {
  it('every route answers its empty shape before any traffic', async () => {
    const history = await manage('GET', '/api/translator/history');
    expect(history.status).toBe(200);
    expect(history.json).toMatchObject({ recording: false, size: 100, entries: [], nextCursor: null });

    const sessions = await manage('GET', '/api/sessions');
    expect(sessions.json).toEqual({ sessions: [], nextCursor: null });
    expect((await manage('GET', '/api/sessions/nothing-here')).status).toBe(404);

    const diversity = await manage('GET', '/api/analytics/diversity?bucket=hour');
    expect(diversity.status).toBe(200);
    expect(diversity.json).toMatchObject({ by: 'provider', metric: 'requests', total: 0, groups: [], hhi: 0, entropyBits: 0, effectiveCount: null });
    // A day of hourly buckets: 24, or 25 when the day does not start on the hour (partial buckets at both ends).
    expect(diversity.json.series.length).toBeGreaterThanOrEqual(24);
    expect(diversity.json.series.length).toBeLessThanOrEqual(25);

    const logs = await manage('GET', '/api/cli-tools/logs');
    expect(logs.json).toEqual({ changes: [], nextCursor: null });

    const storage = await manage('GET', '/api/storage/health');
    expect(storage.status).toBe(200);
    expect(storage.json.lastVacuum).toBeNull();
    expect(storage.json.lastBackup).toBeNull();
  });

  it('a bad query is a 400 with the standard error body naming the parameter', async () => {
    expectBadRequest(await manage('GET', '/api/translator/history?limit=0'), 'limit');
    expectBadRequest(await manage('GET', '/api/translator/history?limit=201'), 'limit');
    expectBadRequest(await manage('GET', '/api/translator/history?clientFormat=cobol'), 'clientFormat');
    expectBadRequest(await manage('GET', '/api/sessions?limit=abc'), 'limit');
    expectBadRequest(await manage('GET', '/api/sessions?cursor=not-a-cursor'), 'cursor');
    expectBadRequest(await manage('GET', '/api/sessions?from=2026-02-01&to=2026-01-01'), 'from');
    expectBadRequest(await manage('GET', '/api/sessions?bogus=1'));
    expectBadRequest(await manage('GET', '/api/analytics/diversity?by=planet'), 'by');
    expectBadRequest(await manage('GET', '/api/analytics/diversity?bucket=minute&from=0'), 'bucket');
    expectBadRequest(await manage('GET', '/api/cli-tools/logs?cursor=-1'), 'cursor');
    expectBadRequest(await manage('POST', '/api/cli-tools/logs', { tool: 'Claude Code!', action: 'apply', files: [] }), 'tool');
    expectBadRequest(await manage('POST', '/api/cli-tools/logs', { tool: 'codex', action: 'erase', files: [] }), 'action');
  });

  it('the routes are management tier: a proxy key is refused', async () => {
    for (const path of ['/api/translator/history', '/api/sessions', '/api/analytics/diversity', '/api/storage/health', '/api/cli-tools/logs']) {
      const res = await fetch(`${env.router.url}${path}`, { headers: { authorization: `Bearer ${env.key}` } });
      expect(res.status, path).toBe(403);
    }
  });
});

describe('translator history', () => {
  it('records nothing while traffic capture is off (the default)', async () => {
    await chat('anthropic/claude-sonnet-4-5');
    const r = await manage('GET', '/api/translator/history');
    expect(r.json.recording).toBe(false);
    expect(r.json.entries).toEqual([]);
  });

  it('with capture on: both formats, both shapes of request and reply, dropped fields, credentials masked', async () => {
    expect((await manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
    try {
      const translated = await chat('anthropic/claude-sonnet-4-5', { extra: { logit_bias: { '50256': -100 } } });
      const streamed = await anthropicMessage('openai/gpt-4o-mini', true);
      const passthrough = await chat('local/some-model', { extra: { store: true } });

      const r = await manage('GET', '/api/translator/history');
      expect(r.status).toBe(200);
      expect(r.json.recording).toBe(true);
      const byTrace = new Map((r.json.entries as any[]).map((e) => [e.traceId, e]));
      expect(r.json.entries.map((e: any) => e.traceId)).toEqual([passthrough, streamed, translated]);

      const t = byTrace.get(translated);
      expect(t).toMatchObject({ clientFormat: 'openai-chat', upstreamFormat: 'anthropic', passthrough: false, provider: 'anthropic', status: 200, stream: false });
      expect(t.dropped).toContain('logit_bias');
      expect(JSON.parse(t.client.request.body)).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Say hello.' }] });
      const upstreamReq = JSON.parse(t.upstream.request.body);
      expect(upstreamReq).toMatchObject({ model: 'claude-sonnet-4-5', messages: [{ role: 'user' }] });
      expect(upstreamReq.max_tokens).toBeGreaterThan(0);
      expect(JSON.parse(t.upstream.response.body).type).toBe('message');
      expect(JSON.parse(t.client.response.body).object).toBe('chat.completion');
      expect(t.upstream.request.headers['x-api-key']).not.toContain(UPSTREAM_ANTHROPIC);
      expect(t.client.request.headers.authorization).not.toContain(env.key);

      const s = byTrace.get(streamed);
      expect(s).toMatchObject({ clientFormat: 'anthropic', upstreamFormat: 'openai-chat', passthrough: false, stream: true, status: 200 });
      expect(s.upstream.response.body).toContain('chat.completion.chunk');
      expect(s.client.response.body).toContain('event: message_stop');

      const p = byTrace.get(passthrough);
      expect(p).toMatchObject({ clientFormat: 'openai-chat', upstreamFormat: 'openai-chat', passthrough: true, provider: 'local' });
      expect(p.dropped).toEqual(['store']);

      const whole = JSON.stringify(r.json);
      expect(whole).not.toContain(UPSTREAM_OPENAI);
      expect(whole).not.toContain(UPSTREAM_ANTHROPIC);
      expect(whole).not.toContain(env.key);

      // Filters and paging.
      const onlyTranslated = await manage('GET', '/api/translator/history?translated=true');
      expect(onlyTranslated.json.entries.map((e: any) => e.traceId)).toEqual([streamed, translated]);
      const byClient = await manage('GET', '/api/translator/history?clientFormat=anthropic');
      expect(byClient.json.entries.map((e: any) => e.traceId)).toEqual([streamed]);
      const first = await manage('GET', '/api/translator/history?limit=2');
      expect(first.json.entries).toHaveLength(2);
      const second = await manage('GET', `/api/translator/history?limit=2&cursor=${first.json.nextCursor}`);
      expect(second.json.entries.map((e: any) => e.traceId)).toEqual([translated]);
      expect(second.json.nextCursor).toBeNull();

      // Bounded by translatorHistorySize.
      expect((await manage('PATCH', '/api/settings', { translatorHistorySize: 2 })).status).toBe(200);
      await chat('anthropic/claude-sonnet-4-5');
      const bounded = await manage('GET', '/api/translator/history?limit=200');
      expect(bounded.json.entries).toHaveLength(2);
      expectBadRequest(await manage('PATCH', '/api/settings', { translatorHistorySize: 201 }));
    } finally {
      await manage('PATCH', '/api/settings', { captureTraffic: false, translatorHistorySize: 100 });
    }
  });
});

describe('sessions', () => {
  it('groups requests by X-Router-Session, newest activity first, with totals, filters and paging', async () => {
    const a1 = await chat('openai/gpt-4o-mini', { session: 'conv-alpha' });
    const a2 = await chat('openai/gpt-4o-mini', { session: 'conv-alpha', stream: true, extra: { stream_options: { include_usage: true } } });
    await chat('anthropic/claude-sonnet-4-5', { session: 'conv-beta' });
    const a3 = await chat('anthropic/claude-sonnet-4-5', { session: 'conv-alpha' });
    await chat('openai/gpt-4o-mini'); // no session: not listed

    const r = await manage('GET', '/api/sessions?perSession=2');
    expect(r.status).toBe(200);
    expect(r.json.sessions.map((s: any) => s.sessionId)).toEqual(['conv-alpha', 'conv-beta']);
    const alpha = r.json.sessions[0];
    expect(alpha).toMatchObject({ requests: 3, traces: 3, errors: 0, providers: ['anthropic', 'openai'], models: ['claude-sonnet-4-5', 'gpt-4o-mini'] });
    expect(alpha.tokensIn).toBeGreaterThan(0);
    expect(alpha.costUsd).toBeGreaterThan(0);
    expect(alpha.recent.map((e: any) => e.traceId)).toEqual([a3, a2]);
    expect(alpha.recent[0].sessionId).toBe('conv-alpha');
    expect(Date.parse(alpha.lastAt)).toBeGreaterThanOrEqual(Date.parse(alpha.firstAt));

    const page1 = await manage('GET', '/api/sessions?limit=1');
    expect(page1.json.sessions.map((s: any) => s.sessionId)).toEqual(['conv-alpha']);
    const page2 = await manage('GET', `/api/sessions?limit=1&cursor=${page1.json.nextCursor}`);
    expect(page2.json.sessions.map((s: any) => s.sessionId)).toEqual(['conv-beta']);
    expect(page2.json.nextCursor).toBeNull();

    const onlyOpenai = await manage('GET', '/api/sessions?provider=openai');
    expect(onlyOpenai.json.sessions.map((s: any) => [s.sessionId, s.requests])).toEqual([['conv-alpha', 2]]);
    const byText = await manage('GET', '/api/sessions?q=beta');
    expect(byText.json.sessions.map((s: any) => s.sessionId)).toEqual(['conv-beta']);
    const future = await manage('GET', `/api/sessions?from=${Date.now() + 60_000}`);
    expect(future.json.sessions).toEqual([]);

    const detail = await manage('GET', '/api/sessions/conv-alpha?limit=2');
    expect(detail.json.requests.map((e: any) => e.traceId)).toEqual([a1, a2]);
    const rest = await manage('GET', `/api/sessions/conv-alpha?limit=2&cursor=${detail.json.nextCursor}`);
    expect(rest.json.requests.map((e: any) => e.traceId)).toEqual([a3]);
    expect(rest.json.nextCursor).toBeNull();
  });
});

describe('traffic diversity', () => {
  it('shares, HHI and entropy over providers and models, overall and per bucket', async () => {
    const from = Date.now();
    for (let i = 0; i < 3; i++) await chat('openai/gpt-4o-mini');
    await chat('anthropic/claude-sonnet-4-5');
    const to = Date.now() + 1;
    const r = await manage('GET', `/api/analytics/diversity?by=provider&bucket=minute&from=${from}&to=${to}`);
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(4);
    expect(r.json.groups.map((g: any) => [g.key, g.label, g.requests, g.share])).toEqual([
      ['openai', 'openai', 3, 0.75],
      ['anthropic', 'anthropic', 1, 0.25],
    ]);
    // HHI = 0.75^2 + 0.25^2; entropy = -(0.75 log2 0.75 + 0.25 log2 0.25).
    expect(r.json.hhi).toBeCloseTo(0.625, 6);
    expect(r.json.effectiveCount).toBeCloseTo(1.6, 4);
    expect(r.json.entropyBits).toBeCloseTo(0.811278, 5);
    expect(r.json.evenness).toBeCloseTo(0.811278, 5);
    const busy = (r.json.series as any[]).filter((p) => p.total > 0);
    expect(busy.reduce((n, p) => n + p.total, 0)).toBe(4);
    for (const p of busy) expect(Object.values(p.shares as Record<string, number>).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);

    const byModel = await manage('GET', `/api/analytics/diversity?by=model&metric=tokens&bucket=minute&from=${from}&to=${to}`);
    expect(byModel.json.groups.map((g: any) => g.key).sort()).toEqual(['anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini']);
    expect(byModel.json.groups.reduce((n: number, g: any) => n + g.share, 0)).toBeCloseTo(1, 5);

    const byAccount = await manage('GET', `/api/analytics/diversity?by=account&bucket=minute&from=${from}&to=${to}`);
    expect(byAccount.json.groups).toHaveLength(2);
    for (const g of byAccount.json.groups) expect(typeof g.key).toBe('string');
  });

  it('by cost: a model with no known price is counted as unpriced, not as a $0 share', async () => {
    const from = Date.now();
    await chat('openai/gpt-4o-mini');
    await chat('openai/my-unpriced-finetune');
    await chat('openai/my-unpriced-finetune');
    const to = Date.now() + 1;
    const r = await manage('GET', `/api/analytics/diversity?by=model&metric=cost&bucket=minute&from=${from}&to=${to}`);
    expect(r.status).toBe(200);
    expect(r.json.unpricedRequests).toBe(2);
    const unpriced = r.json.groups.find((g: any) => g.key === 'openai/my-unpriced-finetune');
    expect(unpriced).toMatchObject({ requests: 2, unpricedRequests: 2, costUsd: 0, share: 0 });
    const priced = r.json.groups.find((g: any) => g.key === 'openai/gpt-4o-mini');
    expect(priced).toMatchObject({ requests: 1, unpricedRequests: 0, share: 1 });
    expect(priced.costUsd).toBeGreaterThan(0);
  });
});

describe('storage health', () => {
  it('reports sizes, row counts per table, the last backup and vacuum, and free disk', async () => {
    await chat('openai/gpt-4o-mini');
    const before = await manage('GET', '/api/storage/health');
    expect(before.status).toBe(200);
    const h = before.json;
    expect(h.database.bytes).toBeGreaterThan(0);
    expect(h.database.pageSize).toBeGreaterThan(0);
    expect(h.database.journalMode).toBe('wal');
    expect(typeof h.database.walBytes).toBe('number');
    const usageRows = h.tables.find((t: any) => t.name === 'usage_log').rows;
    const logged = await manage('GET', '/api/logs?limit=500');
    expect(usageRows).toBe(logged.json.logs.length);
    expect(h.tables.find((t: any) => t.name === 'api_keys').rows).toBe(1);
    expect(h.disk.freeBytes).toBeGreaterThan(0);
    expect(h.disk.totalBytes).toBeGreaterThanOrEqual(h.disk.freeBytes);
    expect(JSON.stringify(h)).not.toContain(env.router.home);

    const backup = await manage('POST', '/api/db-backups', {});
    expect(backup.status, JSON.stringify(backup.json)).toBeLessThan(300);
    const vacuumed = await manage('POST', '/api/storage/vacuum');
    expect(vacuumed.status).toBe(200);
    expect(vacuumed.json.bytesAfter).toBeGreaterThan(0);
    const after = (await manage('GET', '/api/storage/health')).json;
    expect(after.lastBackup.id).toBe(backup.json.id ?? backup.json.backup?.id);
    expect(after.backups.count).toBe(1);
    expect(after.lastVacuum).toMatchObject({ at: vacuumed.json.at, bytesAfter: vacuumed.json.bytesAfter });
    expect(after.tables.find((t: any) => t.name === 'storage_maintenance').rows).toBe(1);
  });
});

describe('config-tool change log', () => {
  it('router config-tool reports what it wrote and what undo restored; the daemon keeps them', async () => {
    const cliConfig = isolateCliConfig();
    const configHome = mkdtempSync(join(tmpdir(), 'router-tools-'));
    try {
      const args = ['--config-home', configHome, '--home', env.router.home, '--key', 'rk_given_key_0123456789', '--yes'];
      const applied = await run(['config-tool', 'claude-code', ...args]);
      expect(applied.exitCode, show(applied)).toBe(0);
      expect(applied.stderr).not.toMatch(/did not record/);
      const undone = await run(['config-tool', 'claude-code', '--undo', ...args]);
      expect(undone.exitCode, show(undone)).toBe(0);

      const r = await manage('GET', '/api/cli-tools/logs');
      expect(r.status).toBe(200);
      const [undo, apply] = r.json.changes;
      const file = join(configHome, '.claude', 'settings.json');
      expect(apply).toMatchObject({ tool: 'claude-code', action: 'apply', files: [{ path: file, action: 'created' }], keyId: null, model: expect.any(String) });
      expect(apply.backup).toEqual(expect.any(String));
      expect(undo).toMatchObject({ tool: 'claude-code', action: 'undo', files: [{ path: file, action: 'removed' }], backup: apply.backup });
      expect(Date.parse(undo.at)).toBeGreaterThanOrEqual(Date.parse(apply.at));

      const filtered = await manage('GET', '/api/cli-tools/logs?tool=codex');
      expect(filtered.json.changes).toEqual([]);
      const paged = await manage('GET', '/api/cli-tools/logs?limit=1');
      expect(paged.json.changes).toHaveLength(1);
      const next = await manage('GET', `/api/cli-tools/logs?limit=1&cursor=${paged.json.nextCursor}`);
      expect(next.json.changes[0].id).toBe(apply.id);
    } finally {
      rmSync(configHome, { recursive: true, force: true });
      rmSync(cliConfig, { recursive: true, force: true });
    }
  });
});
