import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConnectionStore } from '../../src/daemon/providers/connections.js';
import { SyncedModels } from '../../src/daemon/providers/models.js';
import { NodeStore, type ProviderNode } from '../../src/daemon/providers/nodes.js';
import type { ProviderRepository, StoredConnection } from '../../src/daemon/providers/port.js';
import { SqlProviderRepository } from '../../src/daemon/providers/sql-repository.js';
import { sealedConnectionSample } from '../../src/daemon/cluster/identity.js';
import { sharedFeed } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

/** One sealing key for every store of a test (in a cluster the key is shared). */
const keyFile = join(mkdtempSync(join(tmpdir(), 'router-prov-key-')), 'secret.key');

function node(over: Partial<ProviderNode> = {}): ProviderNode {
  return {
    id: randomUUID(),
    name: 'Local vLLM',
    prefix: `p${randomUUID().slice(0, 6)}`,
    type: 'openai-compatible',
    baseUrl: 'http://127.0.0.1:8000/v1',
    apiType: 'responses',
    completions: false,
    rerankFormat: 'tei',
    tokenLimitField: 'max_completion_tokens',
    customHeaders: { 'X-Team': 'core' },
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-02T03:04:05.678Z',
    ...over,
  };
}

function row(over: Partial<StoredConnection> = {}): StoredConnection {
  return {
    id: randomUUID(),
    provider: 'openai',
    name: 'work',
    authKind: 'oauth',
    secretsEnc: 'sealed-text',
    expiresAt: '2026-03-01T00:00:00.000Z',
    priority: 5,
    providerSpecificData: '{"baseUrl":"http://127.0.0.1:9/v1"}',
    isActive: true,
    testStatus: 'ok',
    lastError: null,
    lastTestedAt: '2026-01-02T00:00:00.000Z',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('ProviderRepository', adapter), () => {
    const open = async (): Promise<{ repo: ProviderRepository; second: () => Promise<ProviderRepository> }> => {
      const storage = await adapter.open();
      return { repo: new SqlProviderRepository(storage.driver), second: async () => new SqlProviderRepository(await storage.connect()) };
    };

    it('nodes: stored and loaded back field for field, oldest first; prefixes are unique; unknown ids are missing', async () => {
      const { repo } = await open();
      const a = node({ prefix: 'alpha', createdAt: '2026-01-01T00:00:00.000Z' });
      const b = node({ prefix: 'beta', type: 'anthropic-compatible', apiType: 'chat', completions: true, rerankFormat: 'cohere', tokenLimitField: 'auto', customHeaders: {} });
      expect(await repo.insertNode(b)).toBe('stored');
      expect(await repo.insertNode(a)).toBe('stored');
      expect(await repo.loadNodes()).toEqual([a, b]);
      expect(await repo.insertNode(node({ prefix: 'alpha' }))).toBe('prefix-taken');
      expect(await repo.updateNode({ ...b, prefix: 'alpha' })).toBe('prefix-taken');
      expect(await repo.updateNode(node())).toBe('missing');
      const next = { ...b, name: 'Renamed', prefix: 'gamma', baseUrl: 'https://x.example/v1', updatedAt: '2026-02-01T00:00:00.000Z' };
      expect(await repo.updateNode(next)).toBe('stored');
      expect(await repo.loadNodes()).toEqual([a, next]);
      expect(await repo.removeNode(a.id)).toBe(true);
      expect(await repo.removeNode(a.id)).toBe(false);
      expect(await repo.loadNodes()).toEqual([next]);
    });

    it('connections: rows round-trip; an update writes only the columns it names; order is priority then age', async () => {
      const { repo } = await open();
      const a = row({ priority: 10 });
      const b = row({ priority: 1, secretsEnc: null, expiresAt: null, isActive: false, testStatus: null, lastTestedAt: null, authKind: 'none' });
      const c = row({ priority: 10, createdAt: '2025-12-01T00:00:00.000Z' });
      for (const r of [a, b, c]) await repo.insertConnection(r);
      expect(await repo.loadConnections()).toEqual([b, c, a]);
      expect(await repo.getConnection(a.id)).toEqual(a);
      expect(await repo.getConnection(randomUUID())).toBeUndefined();
      // A test result written on one node leaves the credential another node renewed alone.
      expect(await repo.updateConnection(a.id, { secretsEnc: 'renewed', expiresAt: '2026-04-01T00:00:00.000Z', updatedAt: '2026-01-05T00:00:00.000Z' })).toBe(true);
      expect(await repo.updateConnection(a.id, { testStatus: 'error', lastError: 'refused', isActive: false, updatedAt: '2026-01-06T00:00:00.000Z' })).toBe(true);
      expect(await repo.getConnection(a.id)).toEqual({
        ...a, secretsEnc: 'renewed', expiresAt: '2026-04-01T00:00:00.000Z', testStatus: 'error', lastError: 'refused', isActive: false, updatedAt: '2026-01-06T00:00:00.000Z',
      });
      expect(await repo.updateConnection(randomUUID(), { name: 'x', updatedAt: '2026-01-06T00:00:00.000Z' })).toBe(false);
      expect(await repo.removeConnection(b.id)).toBe(true);
      expect(await repo.removeConnection(b.id)).toBe(false);
      expect((await repo.loadConnections()).map((r) => r.id)).toEqual([c.id, a.id]);
      expect(await repo.sealedSample()).toEqual({ id: [a.id, c.id].sort()[0], secretsEnc: a.id < c.id ? 'renewed' : 'sealed-text' });
    });

    it('synced models: a replace is whole (duplicates folded, the last wins), per provider, and an empty list clears it', async () => {
      const { repo } = await open();
      await repo.replaceModels('n1', [{ id: 'b', contextLength: 8 }, { id: 'a', contextLength: null }, { id: 'b', contextLength: 16 }], '2026-01-01T00:00:00.000Z');
      await repo.replaceModels('n2', [{ id: 'z', contextLength: 4 }], '2026-01-01T00:00:00.000Z');
      const many = Array.from({ length: 450 }, (_, i) => ({ id: `m-${String(i).padStart(3, '0')}`, contextLength: i }));
      await repo.replaceModels('n3', many, '2026-01-01T00:00:00.000Z');
      const rows = await repo.loadModels();
      expect(rows.filter((r) => r.provider === 'n1')).toEqual([{ provider: 'n1', modelId: 'a', contextLength: null }, { provider: 'n1', modelId: 'b', contextLength: 16 }]);
      expect(rows.filter((r) => r.provider === 'n3')).toHaveLength(450);
      await repo.replaceModels('n1', [], '2026-01-02T00:00:00.000Z');
      expect((await repo.loadModels()).filter((r) => r.provider !== 'n3')).toEqual([{ provider: 'n2', modelId: 'z', contextLength: 4 }]);
      const stored = await SyncedModels.create(repo);
      expect(stored.get('n3')!.map((m) => m.id)).toEqual(many.map((m) => m.id));
      expect(stored.get('n1')).toBeUndefined();
    });

    it('credentials are sealed in storage (never plain), opened by a second store with the shared key, and are the sealing sample', async () => {
      const { repo, second } = await open();
      const one = await ConnectionStore.create(repo, keyFile);
      const c = await one.create({ provider: 'openai', name: 'w', authKind: 'api-key', credential: { apiKey: 'sk-secret-123456' }, providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1', proxy: 'http://u:pw-77@proxy:3128' } });
      const stored = (await repo.getConnection(c.id))!;
      expect(JSON.stringify(stored)).not.toContain('sk-secret-123456');
      expect(JSON.stringify(stored)).not.toContain('pw-77');
      const two = await ConnectionStore.create(await second(), keyFile);
      expect(two.get(c.id)).toEqual(c);
      expect(await sealedConnectionSample(repo)).toEqual({ enc: stored.secretsEnc, context: `connection:${c.id}` });
    });

    it("a second node's stores follow the first's writes (nodes, connections, synced models) and tell their listeners", async () => {
      const { repo, second } = await open();
      const { feed, delivered } = sharedFeed();
      const [f1, f2] = [feed(), feed()];
      const one = { conns: await ConnectionStore.create(repo, keyFile, f1), nodes: await NodeStore.create(repo, f1), models: await SyncedModels.create(repo, f1) };
      const repo2 = await second();
      const two = { conns: await ConnectionStore.create(repo2, keyFile, f2), nodes: await NodeStore.create(repo2, f2), models: await SyncedModels.create(repo2, f2) };
      let heard = 0;
      two.conns.onChange(() => heard++);
      let nodesHeard = 0;
      two.nodes.onChange(() => nodesHeard++);

      const n = await one.nodes.create({ name: 'vllm', prefix: 'vllm', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:8000/v1/' });
      const c = await one.conns.create({ provider: n.id, name: 'k', authKind: 'api-key', credential: { apiKey: 'sk-1' } });
      await one.models.replace(n.id, [{ id: 'qwen' }]);
      await delivered();
      expect(two.nodes.byPrefix('vllm')).toEqual(n);
      expect(two.conns.active(n.id).map((x) => x.credential.apiKey)).toEqual(['sk-1']);
      expect(two.models.get(n.id)).toEqual([{ id: 'qwen', contextLength: undefined }]);
      expect(heard).toBe(1);
      expect(nodesHeard).toBe(1);

      // Disabled on one node: no longer active on the other; then removed.
      await one.conns.update(c.id, { isActive: false });
      await delivered();
      expect(two.conns.active(n.id)).toEqual([]);
      expect(two.conns.get(c.id)!.isActive).toBe(false);
      await one.conns.remove(c.id);
      await one.nodes.remove(n.id);
      await delivered();
      expect(two.conns.get(c.id)).toBeUndefined();
      expect(two.conns.hasAny(n.id)).toBe(false);
      expect(two.nodes.list()).toEqual([]);
    });

    it('renewed tokens written on one node are not put back by a stale write of the other; fresh() reads what storage holds', async () => {
      const { repo, second } = await open();
      const one = await ConnectionStore.create(repo, keyFile);
      const two = await ConnectionStore.create(await second(), keyFile);
      const c = await one.create({ provider: 'claude-code', name: 'o', authKind: 'oauth', credential: { accessToken: 'at-0', refreshToken: 'rt-0' }, expiresAt: '2026-01-01T00:00:00.000Z' });
      await two.reload();
      await one.update(c.id, { credential: { accessToken: 'at-1', refreshToken: 'rt-1' }, expiresAt: '2026-06-01T00:00:00.000Z' });
      // Node two has not heard yet: its test result must not write its stale tokens back.
      await two.update(c.id, { testStatus: 'ok', lastTestedAt: '2026-01-02T00:00:00.000Z' });
      expect(two.get(c.id)!.credential.refreshToken).toBe('rt-0');
      const fresh = await two.fresh(c.id);
      expect(fresh!.credential).toEqual({ accessToken: 'at-1', refreshToken: 'rt-1' });
      expect(fresh!.testStatus).toBe('ok');
      expect(two.get(c.id)!.credential.refreshToken).toBe('rt-1');
      await one.reload();
      expect(one.get(c.id)).toEqual(fresh);
    });

    it('a node prefix taken on another node meanwhile is a 409, and the snapshot is unchanged', async () => {
      const { repo, second } = await open();
      const one = await NodeStore.create(repo);
      const two = await NodeStore.create(await second());
      await one.create({ name: 'a', prefix: 'same', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1' });
      await expect(two.create({ name: 'b', prefix: 'same', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:2/v1' })).rejects.toMatchObject({ status: 409, code: 'prefix_taken' });
      expect(two.list()).toEqual([]);
    });
  });
}
