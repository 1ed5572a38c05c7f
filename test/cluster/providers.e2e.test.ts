/**
 * Providers in a cluster (issue 29 items 2 and 3): two real daemons on one real PostgreSQL 15 and Redis 7.
 * - A connection (and a provider node) added on one node serves requests on the other within 1 s; one
 *   disabled or deleted on one node stops being used by the other within 1 s.
 * - The OAuth refresh lock is cluster-wide and rotation-safe, against a mock token server that rotates
 *   refresh tokens (a used one is refused): an expiring connection asked for on both nodes at once is
 *   refreshed exactly once, both nodes then send the new access token, and no node ever sends a rotated
 *   refresh token again, also when the renewal was stored by another node whose notice has not arrived.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { decryptWithKey, encryptWithKey } from '../../src/daemon/store/secrets.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterNodeProcess, type ClusterUnderTest } from '../support/cluster.js';

const missing = clusterUnavailable({ redis: true });

let cluster: ClusterUnderTest;
let upstream: MockUpstream;
let oauth: OAuthMock;
let key: string;
let a: ClusterNodeProcess;
let b: ClusterNodeProcess;

async function chat(node: ClusterNodeProcess, model: string): Promise<number> {
  const res = await fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The credential the upstream received with the last chat request. */
const lastCredential = (): string | undefined => {
  const r = upstream.requests.filter((x) => x.path.endsWith('/chat/completions') || x.path.endsWith('/messages')).at(-1);
  return r && (r.headers.authorization ?? r.headers['x-api-key']);
};

/** Ms until a chat on `node` succeeds and went out with `credential` (polled), failing past `ms`. */
async function servedWith(node: ClusterNodeProcess, model: string, credential: string, ms: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const status = await chat(node, model);
    if (status === 200 && lastCredential() === credential) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`after ${ms} ms ${node.nodeId} answers ${status}, upstream saw ${lastCredential()} (expected ${credential})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(missing)(`providers in a cluster${missing ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    upstream = await startMockUpstream();
    oauth = await startOAuthMock();
    cluster = await startCluster({ nodes: 2, redis: true });
    [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    key = await a.createKey();
    expect((await a.manage('PATCH', '/api/settings', { oauthEndpoints: { 'claude-code': mockEndpoints(oauth, upstream.anthropicBase) } })).status).toBe(200);
    // Both written on A: B has them once the notices arrive.
    await until(() => b.manage('GET', '/api/settings'), (r) => r.json?.oauthEndpoints?.['claude-code']?.tokenUrl === `${oauth.url}/token`);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await upstream?.close();
    await oauth?.close();
  }, 60_000);

  describe('connections and nodes', () => {
    let one: string;

    it('a connection added on node A serves a request on node B within 1 s', async () => {
      const made = await a.manage('POST', '/api/providers', { provider: 'openai', name: 'one', apiKey: 'sk-one-0123456789', priority: 1, providerSpecificData: { baseUrl: upstream.openaiBase } });
      expect(made.status).toBe(201);
      one = made.json.id;
      expect(await servedWith(b, 'openai/gpt-4o-mini', 'Bearer sk-one-0123456789', 1_000)).toBeLessThan(1_000);
    });

    it('a connection disabled on A stops being used on B within 1 s; enabled again, used again', async () => {
      const two = await a.manage('POST', '/api/providers', { provider: 'openai', name: 'two', apiKey: 'sk-two-0123456789', priority: 2, providerSpecificData: { baseUrl: upstream.openaiBase } });
      expect(two.status).toBe(201);
      await until(() => b.manage('GET', `/api/providers/${two.json.id}`), (r) => r.status === 200);
      expect((await a.manage('PUT', `/api/providers/${one}`, { isActive: false })).status).toBe(200);
      expect(await servedWith(b, 'openai/gpt-4o-mini', 'Bearer sk-two-0123456789', 1_000)).toBeLessThan(1_000);
      for (let i = 0; i < 3; i++) {
        expect(await chat(b, 'openai/gpt-4o-mini')).toBe(200);
        expect(lastCredential()).toBe('Bearer sk-two-0123456789');
      }
      expect((await a.manage('PUT', `/api/providers/${one}`, { isActive: true })).status).toBe(200);
      expect(await servedWith(b, 'openai/gpt-4o-mini', 'Bearer sk-one-0123456789', 1_000)).toBeLessThan(1_000);
    });

    it('a connection deleted on A stops being used on B within 1 s and is gone from its list', async () => {
      expect((await a.manage('DELETE', `/api/providers/${one}`)).status).toBe(204);
      expect(await servedWith(b, 'openai/gpt-4o-mini', 'Bearer sk-two-0123456789', 1_000)).toBeLessThan(1_000);
      expect((await b.manage('GET', '/api/providers')).json.connections.map((c: { id: string }) => c.id)).not.toContain(one);
      expect((await b.manage('GET', `/api/providers/${one}`)).status).toBe(404);
    });

    it('a provider node and its connection added on A serve <prefix>/<model> on B within 1 s; the node deleted on A is gone on B', async () => {
      const node = await a.manage('POST', '/api/provider-nodes', { name: 'box', prefix: 'box', type: 'openai-compatible', baseUrl: upstream.openaiBase });
      expect(node.status).toBe(201);
      expect((await a.manage('POST', '/api/providers', { provider: 'box', apiKey: 'sk-box-0123456789' })).status).toBe(201);
      expect(await servedWith(b, 'box/any-model', 'Bearer sk-box-0123456789', 1_000)).toBeLessThan(1_000);
      expect((await a.manage('DELETE', `/api/provider-nodes/${node.json.id}`)).status).toBe(204);
      const start = Date.now();
      const gone = await until(() => chat(b, 'box/any-model'), (s) => s !== 200, 1_000);
      expect(gone).not.toBe(200);
      expect(Date.now() - start).toBeLessThan(1_000);
      expect((await b.manage('GET', '/api/provider-nodes')).json.nodes).toEqual([]);
    });
  });

  describe('OAuth refresh across nodes (rotating token server)', () => {
    beforeEach(() => {
      oauth.refreshCalls = 0;
      oauth.options.refreshDelayMs = undefined;
      oauth.options.expiresIn = undefined;
    });

    /** A Claude login on A whose access token lives `expiresIn` s; resolves once B has the connection too. */
    async function login(expiresIn: number): Promise<string> {
      oauth.options.expiresIn = expiresIn;
      const auth = (await a.manage('GET', '/api/oauth/claude-code/authorize')).json;
      const consent = await fetch(auth.authUrl, { redirect: 'manual' });
      const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
      const r = await a.manage('POST', '/api/oauth/claude-code/exchange', { code: `${code}#${auth.state}` });
      expect(r.status).toBe(201);
      oauth.options.expiresIn = undefined;
      const id = r.json.connection.id as string;
      await until(() => b.manage('GET', `/api/providers/${id}`), (x) => x.status === 200);
      return id;
    }

    /** The refresh tokens sent to the token endpoint since `from`, in order. */
    const refreshTokensSent = (from: number): string[] =>
      oauth.requests.slice(from).filter((r) => r.path === '/token' && r.fields.grant_type === 'refresh_token').map((r) => String(r.fields.refresh_token));

    /** The connection's credential as the database holds it (opened with the cluster's key). */
    async function stored(db: PostgresDriver, id: string): Promise<{ accessToken: string; refreshToken: string; expiresAt: string }> {
      const [row] = await db.query<{ secrets_enc: string; expires_at: string }>('SELECT secrets_enc, expires_at FROM provider_connections WHERE id = ?', [id]);
      const cred = JSON.parse(decryptWithKey(row!.secrets_enc, Buffer.from(cluster.secretKey, 'hex'), `connection:${id}`)) as { accessToken: string; refreshToken: string };
      return { ...cred, expiresAt: row!.expires_at };
    }

    const claude = 'claude-code/claude-sonnet-4-5';

    it('an expiring connection asked for on both nodes at once is refreshed once; both send the new token; no refresh token is sent twice', async () => {
      const id = await login(120); // inside the 5-minute refresh window on both nodes
      const from = oauth.requests.length;
      oauth.options.refreshDelayMs = 300;
      upstream.reset();
      const statuses = await Promise.all([...Array.from({ length: 4 }, () => chat(a, claude)), ...Array.from({ length: 4 }, () => chat(b, claude))]);
      expect(statuses).toEqual(Array(8).fill(200));
      expect(oauth.refreshCalls).toBe(1);
      const sent = refreshTokensSent(from);
      expect(sent).toHaveLength(1);
      const db = new PostgresDriver({ url: cluster.databaseUrl, max: 1 });
      try {
        const now = await stored(db, id);
        expect(now.refreshToken).not.toBe(sent[0]);
        const auths = upstream.requests.filter((r) => r.path.endsWith('/messages')).map((r) => r.headers.authorization);
        expect(auths).toEqual(Array(8).fill(`Bearer ${now.accessToken}`));
        // Later requests on either node keep the new token and refresh nothing.
        expect(await chat(b, claude)).toBe(200);
        expect(await chat(a, claude)).toBe(200);
        expect(lastCredential()).toBe(`Bearer ${now.accessToken}`);
        expect(oauth.refreshCalls).toBe(1);
      } finally {
        await db.close();
      }
      expect(new Set(refreshTokensSent(0)).size).toBe(refreshTokensSent(0).length);
    });

    it('a renewal another node stored before its notice arrived is used: the rotated refresh token is never sent again', async () => {
      const id = await login(120);
      const db = new PostgresDriver({ url: cluster.databaseUrl, max: 1 });
      try {
        // "Another node" renews the token (the server rotates: the old refresh token is dead from now on)
        // and stores it, but its notice is lost: both nodes' snapshots still hold the old, expiring token.
        const before = await stored(db, id);
        const reply = await fetch(`${oauth.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.refreshToken, client_id: 'other-node' }) });
        const renewed = (await reply.json()) as { access_token: string; refresh_token: string };
        expect(renewed.refresh_token).not.toBe(before.refreshToken);
        const sealed = encryptWithKey(JSON.stringify({ accessToken: renewed.access_token, refreshToken: renewed.refresh_token }), Buffer.from(cluster.secretKey, 'hex'), `connection:${id}`);
        const expiresAt = new Date(Date.now() + 3600_000).toISOString();
        await db.run('UPDATE provider_connections SET secrets_enc = ?, expires_at = ? WHERE id = ?', [sealed, expiresAt, id]);
        const from = oauth.requests.length;
        oauth.refreshCalls = 0;
        upstream.reset();
        const statuses = await Promise.all([chat(a, claude), chat(b, claude), chat(a, claude), chat(b, claude)]);
        expect(statuses).toEqual([200, 200, 200, 200]);
        expect(refreshTokensSent(from)).not.toContain(before.refreshToken);
        expect(oauth.refreshCalls).toBe(0);
        const auths = upstream.requests.filter((r) => r.path.endsWith('/messages')).map((r) => r.headers.authorization);
        expect(auths).toEqual(Array(4).fill(`Bearer ${renewed.access_token}`));
        // Nobody put the old tokens back.
        expect((await stored(db, id)).refreshToken).toBe(renewed.refresh_token);
      } finally {
        await db.close();
      }
    });
  });
});
