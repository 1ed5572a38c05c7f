import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { Logger } from '../../src/daemon/logger.js';
import type { MemoryRepository, NewMemory } from '../../src/daemon/memory/port.js';
import { MemoryService } from '../../src/daemon/memory/service.js';
import { loadMemorySettings, saveMemorySettings } from '../../src/daemon/memory/settings.js';
import { SqlMemoryRepository } from '../../src/daemon/memory/sql-repository.js';
import type { ChangeFeed } from '../../src/daemon/store/changes.js';
import { LOCAL_CHANGES } from '../../src/daemon/store/changes.js';
import { copyTables } from '../../src/daemon/cluster/copy-tables.js';
import { copyFileVectors } from '../../src/daemon/memory/vector-storage.js';
import { closeDatabase, openDatabase } from '../../src/daemon/store/db.js';
import type { SqlDriver } from '../../src/daemon/store/driver.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import type { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';
import { loadCorpus, writeStaticModel } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'router-memory-port-'));
const keyFile = join(dir, 'secret.key');
const modelDir = writeStaticModel(join(dir, 'model'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = new Date('2026-05-01T12:00:00.000Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);

function entry(over: Partial<NewMemory> = {}): NewMemory {
  return { id: randomUUID(), type: 'factual', key: 'k', content: 'c', sessionId: null, apiKeyId: null, metadata: {}, expiresAt: null, tokens: 3, ...over };
}

/** A unit vector along one axis (plus a little of the next, so cosine distances differ). */
function axis(dims: number, i: number, lean = 0): Float32Array {
  const v = new Float32Array(dims);
  v[i % dims] = 1;
  v[(i + 1) % dims] = lean;
  return v;
}

/** A deterministic vector that looks random (the rebuild measure's rows). */
function benchVector(seq: number, dims: number): Float32Array {
  return new Float32Array(dims).map((_x, d) => {
    const x = Math.sin(seq * 12.9898 + d * 78.233) * 43758.5453;
    return x - Math.floor(x) - 0.5;
  });
}

/** Change feeds of several nodes on one bus: a node's publish calls every other node's subscribers. */
function linkedFeeds(n: number): ChangeFeed[] {
  const subs: Array<{ node: number; topic: string; fn: () => void }> = [];
  return Array.from({ length: n }, (_v, node) => ({
    publish(topic: string) {
      for (const s of subs) if (s.node !== node && s.topic === topic) setImmediate(s.fn);
    },
    subscribe(topic: string, fn: () => void) {
      const sub = { node, topic, fn };
      subs.push(sub);
      return () => subs.splice(subs.indexOf(sub), 1);
    },
  }));
}

async function until(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const services: MemoryService[] = [];
afterAll(() => {
  for (const s of services) s.close();
});

async function engine(driver: SqlDriver, changes: ChangeFeed = LOCAL_CHANGES): Promise<MemoryService> {
  const s = await MemoryService.create({ repo: new SqlMemoryRepository(driver), changes, log: new Logger({}), keyFile });
  services.push(s);
  return s;
}

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('MemoryRepository', adapter), () => {
    const open = async (): Promise<{ repo: MemoryRepository; driver: SqlDriver; connect: () => Promise<SqlDriver> }> => {
      const storage = await adapter.open();
      const repo = new SqlMemoryRepository(storage.driver);
      return { repo, driver: storage.driver, connect: () => storage.connect() };
    };

    it('stores rows and reads them back field for field; expired rows are hidden from get and list, found by expired()', async () => {
      const { repo } = await open();
      const a = entry({ key: 'Tennis', content: 'Plays tennis on Saturdays', metadata: { source: 'test', n: 1 }, sessionId: 's1', apiKeyId: 'key-1' });
      const gone = entry({ expiresAt: later(1000).toISOString() });
      await repo.insert(a, NOW);
      await repo.insert(gone, NOW);
      const got = await repo.getAny(a.id);
      expect(got).toMatchObject({ ...a, hitCount: 0, lastHitAt: null, archived: false, createdAt: NOW.toISOString(), updatedAt: NOW.toISOString(), embeddingSig: null, externalSig: null });
      expect(typeof got!.seq).toBe('number');
      expect(await repo.get(gone.id, later(2000))).toBeUndefined();
      expect((await repo.getAny(gone.id))?.id).toBe(gone.id);
      expect((await repo.expired(later(2000))).map((r) => r.id)).toEqual([gone.id]);
      expect((await repo.list({ apiKeyId: null, limit: 10, offset: 0 }, later(2000))).total).toBe(0);
      await repo.deleteMany([(await repo.getAny(gone.id))!.seq]);
      expect(await repo.getAny(gone.id)).toBeUndefined();
    });

    it('lists newest first with filters (q case-insensitive, LIKE wildcards literal), totals and hit counts; updates and archives', async () => {
      const { repo } = await open();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const e = entry({ key: `note ${i}`, content: i === 3 ? 'Coffee 100%_pure' : `text ${i}`, type: i % 2 ? 'episodic' : 'factual', tokens: i + 1 });
        ids.push(e.id);
        await repo.insert(e, later(i * 1000));
      }
      const page = await repo.list({ apiKeyId: null, limit: 2, offset: 0 }, NOW);
      expect(page.data.map((r) => r.id)).toEqual([ids[4], ids[3]]);
      expect(page).toMatchObject({ total: 5, tokensUsed: 15, hit: 0 });
      expect((await repo.list({ apiKeyId: null, type: 'episodic', limit: 10, offset: 0 }, NOW)).total).toBe(2);
      expect((await repo.list({ apiKeyId: null, q: 'COFFEE 100%_', limit: 10, offset: 0 }, NOW)).data.map((r) => r.id)).toEqual([ids[3]]);
      expect((await repo.list({ apiKeyId: null, q: '1%', limit: 10, offset: 0 }, NOW)).total).toBe(0);
      const seqs = (await repo.bySeqs([], NOW)).size;
      expect(seqs).toBe(0);
      const rows = [...(await repo.byIds(ids, NOW)).values()];
      await repo.touchHits(rows.slice(0, 2).map((r) => r.seq), later(9000));
      expect((await repo.list({ apiKeyId: null, limit: 10, offset: 0 }, NOW)).hit).toBe(2);
      const first = (await repo.getAny(ids[0]!))!;
      expect(await repo.update(first.id, { type: 'procedural', key: 'renamed', content: first.content, metadata: { a: 1 }, tokens: 9 }, true, later(10_000))).toBe(true);
      expect(await repo.update(randomUUID(), { type: 'factual', key: 'x', content: 'x', metadata: {}, tokens: 1 }, false, NOW)).toBe(false);
      expect(await repo.getAny(first.id)).toMatchObject({ type: 'procedural', key: 'renamed', metadata: { a: 1 }, tokens: 9, updatedAt: later(10_000).toISOString() });
      expect((await repo.findByKey(null, 'RENAMED', NOW))?.id).toBe(first.id);
      expect(await repo.findByKey('other-key', 'renamed', NOW)).toBeUndefined();
      expect(await repo.episodicScopes()).toEqual([null]);
      const episodes = await repo.episodicBefore(null, later(60_000), undefined, NOW);
      expect(episodes.map((r) => r.id)).toEqual([ids[1], ids[3]]);
      await repo.archive(episodes.map((r) => r.seq), NOW);
      expect(await repo.episodicScopes()).toEqual([]);
      expect((await repo.bySeqs(episodes.map((r) => r.seq), NOW)).size).toBe(0);
    });

    it('keyword search: best match first with the key weighing more, scopes, archived and expired rows left out, syntax is plain text', async () => {
      const { repo } = await open();
      const inKey = entry({ key: 'espresso', content: 'The morning drink is ready.' });
      const inContent = entry({ key: 'breakfast', content: 'Drinks an espresso with toast.' });
      const other = entry({ key: 'espresso', content: 'another scope', apiKeyId: 'key-2' });
      const expired = entry({ key: 'espresso', content: 'espresso expired', expiresAt: later(1).toISOString() });
      const archived = entry({ key: 'espresso', content: 'espresso archived', archived: true });
      for (const e of [inKey, inContent, other, expired, archived]) await repo.insert(e, NOW);
      const seqOf = async (id: string) => (await repo.getAny(id))!.seq;
      const hits = await repo.ftsSearch('espresso?', [null], 10, later(10));
      expect(hits.map((h) => h.seq)).toEqual([await seqOf(inKey.id), await seqOf(inContent.id)]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect(hits[1]!.score).toBeGreaterThan(0);
      expect((await repo.ftsSearch('espresso', ['key-2'], 10, later(10))).map((h) => h.seq)).toEqual([await seqOf(other.id)]);
      expect(await repo.ftsSearch('espresso', [], 10, later(10))).toEqual([]);
      // Stemming: "drinks" finds "drink".
      expect((await repo.ftsSearch('drinks', [null], 10, later(10))).map((h) => h.seq)).toContain(await seqOf(inKey.id));
      for (const text of ['"NEAR(espresso" AND *', "es'presso) | !", '!!! ***']) await expect(repo.ftsSearch(text, [null, 'key-2'], 10, NOW)).resolves.toBeInstanceOf(Array);
      expect(await repo.ftsAvailable()).toBe(true);
      // Updates reach the index.
      await repo.update(inContent.id, { type: 'factual', key: 'breakfast', content: 'Tea and toast.', metadata: {}, tokens: 3 }, true, NOW);
      expect((await repo.ftsSearch('espresso', [null], 10, later(10))).map((h) => h.seq)).toEqual([await seqOf(inKey.id)]);
    });

    it('vectors: a signature is kept or resets every vector; upsert, knn by scope, markEmbedded, pending counts, delete', async () => {
      const { repo } = await open();
      expect(await repo.hasVectorIndex()).toBe(false);
      expect(await repo.adoptSignature('static:a:4', 4)).toBe(true);
      expect(await repo.adoptSignature('static:a:4', 4)).toBe(false);
      expect(await repo.hasVectorIndex()).toBe(true);
      expect(await repo.meta('embedding_signature')).toBe('static:a:4');
      const rows = [entry(), entry(), entry({ apiKeyId: 'key-3' }), entry()];
      for (const r of rows) await repo.insert(r, NOW);
      const seqs = await Promise.all(rows.map(async (r) => (await repo.getAny(r.id))!.seq));
      expect(await repo.needsReindex('static:a:4', NOW)).toBe(4);
      expect((await repo.pendingEmbedding('static:a:4', 2, NOW)).map((r) => r.seq)).toEqual(seqs.slice(0, 2));
      await repo.upsertVector(seqs[0]!, null, axis(4, 0), 'static:a:4');
      await repo.upsertVector(seqs[1]!, null, axis(4, 1), 'static:a:4');
      await repo.upsertVector(seqs[2]!, 'key-3', axis(4, 0, 0.1), 'static:a:4');
      await repo.markEmbedded(seqs[3]!, 'static:a:4');
      expect(await repo.needsReindex('static:a:4', NOW)).toBe(0);
      expect(await repo.vecRowCount()).toBe(3);
      expect(Array.from((await repo.vector(seqs[1]!))!)).toEqual(Array.from(axis(4, 1)));
      expect(await repo.vector(seqs[3]!)).toBeUndefined();
      const global = await repo.knn(axis(4, 0), [null], 5);
      expect(global.map((h) => h.seq)).toEqual([seqs[0], seqs[1]]);
      expect(global[0]!.similarity).toBeCloseTo(1, 5);
      expect((await repo.knn(axis(4, 0), [null, 'key-3'], 2)).map((h) => h.seq)).toEqual([seqs[0], seqs[2]]);
      // Replacing a vector moves the row.
      await repo.upsertVector(seqs[0]!, null, axis(4, 2), 'static:a:4');
      expect((await repo.knn(axis(4, 1), [null], 1)).map((h) => h.seq)).toEqual([seqs[1]]);
      expect((await repo.knn(axis(4, 2), [null], 1)).map((h) => h.seq)).toEqual([seqs[0]]);
      // External store bookkeeping.
      expect((await repo.pendingExternal('static:a:4', 10, NOW)).length).toBe(4);
      await repo.setExternalSig([seqs[0]!, seqs[1]!], 'static:a:4');
      expect((await repo.pendingExternal('static:a:4', 10, NOW)).map((r) => r.seq)).toEqual([seqs[2], seqs[3]]);
      await repo.clearExternalSigs();
      expect((await repo.pendingExternal('static:a:4', 10, NOW)).length).toBe(4);
      // Deleting a row takes its vector.
      await repo.deleteMany([seqs[1]!]);
      expect(await repo.vecRowCount()).toBe(2);
      expect((await repo.knn(axis(4, 1), [null], 5)).map((h) => h.seq)).not.toContain(seqs[1]);
      // Another signature: every vector is gone and every row pending.
      expect(await repo.adoptSignature('static:b:6', 6)).toBe(true);
      expect(await repo.vecRowCount()).toBe(0);
      expect(await repo.needsReindex('static:b:6', NOW)).toBe(3);
      await repo.upsertVector(seqs[0]!, null, axis(6, 5), 'static:b:6');
      expect((await repo.knn(axis(6, 5), [null], 1)).map((h) => h.seq)).toEqual([seqs[0]]);
      await repo.clearEmbeddingSigs();
      expect(await repo.needsReindex('static:b:6', NOW)).toBe(3);
    });

    it('settings: the document round-trips with the Qdrant key sealed; per-key settings upsert', async () => {
      const { repo, driver } = await open();
      expect(await repo.loadSettings()).toBeUndefined();
      const defaults = await loadMemorySettings(repo, keyFile);
      await saveMemorySettings(repo, { ...defaults, qdrantApiKey: 'qdrant-secret', minSimilarity: 0.5 }, keyFile);
      expect(await repo.loadSettings()).not.toContain('qdrant-secret');
      expect(await loadMemorySettings(repo, keyFile)).toMatchObject({ qdrantApiKey: 'qdrant-secret', minSimilarity: 0.5 });
      const keys = new SqlKeyRepository(driver);
      const keyId = randomUUID();
      await keys.insert({ id: keyId, name: 'k', maskedKey: 'rk_x...y', scopes: ['proxy'], isActive: true, createdAt: NOW.toISOString(), lastUsedAt: null, dailyRequestLimit: null, tokenLimits: [], budget: null, keyHash: Buffer.alloc(32, 7) });
      const s = { inject: true, extract: false, injectMaxTokens: 500, injectLimit: 4, strategy: 'exact' as const, scope: 'key' as const };
      await repo.saveKeySettings(keyId, s, NOW);
      await repo.saveKeySettings(keyId, { ...s, extract: true }, NOW);
      expect(await repo.loadKeySettings()).toEqual([{ apiKeyId: keyId, settings: { ...s, extract: true } }]);
      // The row goes with its key.
      await keys.remove(keyId);
      expect(await repo.loadKeySettings()).toEqual([]);
    });

    it('retrieval over the labelled corpus: hybrid recall@5 >= 0.8 and above keyword-only, on this adapter', async () => {
      const { driver } = await open();
      const memory = await engine(driver);
      await memory.updateSettings({ staticModelPath: modelDir, embeddingOrder: ['static'] });
      const fixtureOf = new Map<string, string>();
      for (const m of loadCorpus().memories) fixtureOf.set((await memory.create({ type: m.type as 'factual', key: m.key, content: m.content })).id, m.id);
      await memory.idle();
      const recall = async (strategy: 'exact' | 'semantic' | 'hybrid') => {
        let sum = 0;
        for (const q of loadCorpus().queries) {
          const r = await memory.retrieve({ query: q.query, strategy, limit: 5, maxTokens: 16000, scopes: [null], dryRun: true });
          expect(r.resolution.strategyUsed).toBe(strategy);
          const got = new Set(r.memories.map((m) => fixtureOf.get(m.id)));
          sum += q.relevant.filter((id) => got.has(id)).length / q.relevant.length;
        }
        return sum / loadCorpus().queries.length;
      };
      const exact = await recall('exact');
      const semantic = await recall('semantic');
      const hybrid = await recall('hybrid');
      console.log(`memory recall@5 on ${adapter.name}: exact ${exact.toFixed(3)}, semantic ${semantic.toFixed(3)}, hybrid ${hybrid.toFixed(3)}`);
      expect(hybrid).toBeGreaterThan(exact);
      expect(hybrid).toBeGreaterThanOrEqual(0.8);
      expect(semantic).toBeGreaterThanOrEqual(0.8);
      const status = await memory.status();
      expect(status.keyword).toEqual({ available: true, backend: adapter.name === 'sqlite' ? 'FTS5' : 'tsvector' });
      expect(status.vectorStore).toMatchObject({ backend: 'embedded-vec', available: true, rowCount: loadCorpus().memories.length, needsReindex: 0 });
    });
  });

  describe.skipIf(adapter.unavailable || adapter.name !== 'postgres')(adapterTitle('Memory shared by cluster nodes', adapter), () => {
    it('entries, keyword and semantic retrieval, deletes and settings written on one node are in effect on another', async () => {
      const storage = await adapter.open();
      const [feedA, feedB] = linkedFeeds(2);
      const a = await engine(storage.driver, feedA);
      const b = await engine(await storage.connect(), feedB);
      await a.updateSettings({ staticModelPath: modelDir, embeddingOrder: ['static'] });
      // B follows the settings (and selects the same embedding source, keeping the shared vectors).
      await until(async () => b.settings.staticModelPath === modelDir && (await b.status()).embedding.model === 'topic-static', 'settings on B');
      const created = await a.create({ type: 'factual', key: 'dog', content: 'Has a golden retriever puppy called Biscuit.' });
      const find = async (node: MemoryService, strategy: 'exact' | 'semantic', query: string) =>
        (await node.retrieve({ query, strategy, limit: 5, maxTokens: 4000, scopes: [null], dryRun: true })).memories.map((m) => m.id);
      expect(await find(b, 'exact', 'Biscuit')).toEqual([created.id]);
      await until(async () => (await find(b, 'semantic', 'my dog')).includes(created.id), 'the vector on B');
      expect((await b.get(created.id))?.content).toContain('Biscuit');
      // A node started now builds its index from the rows.
      const c = await engine(await storage.connect());
      await c.updateSettings({});
      expect(await find(c, 'semantic', 'my dog')).toEqual([created.id]);
      expect((await c.status()).vectorStore).toMatchObject({ rowCount: 1, needsReindex: 0 });
      // B deletes it: gone from A's keyword and vector search.
      expect(await b.delete(created.id)).toBe(true);
      expect(await find(a, 'exact', 'Biscuit')).toEqual([]);
      await until(async () => (await a.status()).vectorStore.rowCount === 0, "A's index dropping the vector");
      // A model switched on B: A's index follows the new width, and A's reindex and B's agree.
      const wide = writeStaticModel(join(dir, 'model-wide'), { name: 'topic-static-wide', extraDims: 8 });
      await b.updateSettings({ staticModelPath: wide });
      await until(async () => (await a.status()).embedding.dimensions === 24, 'the new model on A');
      const again = await a.create({ type: 'factual', key: 'pet', content: 'The puppy sleeps a lot.' });
      await until(async () => (await find(b, 'semantic', 'dog')).includes(again.id), 'the new-width vector on B');
    });

    it('per-key settings written on one node are read by the other', async () => {
      const storage = await adapter.open();
      const [feedA, feedB] = linkedFeeds(2);
      const a = await engine(storage.driver, feedA);
      const b = await engine(await storage.connect(), feedB);
      const keyId = randomUUID();
      await new SqlKeyRepository(storage.driver).insert({ id: keyId, name: 'k', maskedKey: 'rk_x...y', scopes: ['proxy'], isActive: true, createdAt: NOW.toISOString(), lastUsedAt: null, dailyRequestLimit: null, tokenLimits: [], budget: null, keyHash: Buffer.alloc(32, 9) });
      expect(b.keySettings.peek(keyId)).toBeUndefined();
      await a.setKeySettings(keyId, { ...a.keySettings.get(keyId), inject: true });
      await until(async () => b.keySettings.peek(keyId)?.inject === true, 'key settings on B');
    });

    it('cluster migrate: vectors of a single machine become shared rows; the cluster needs no reindex', async () => {
      const fileDir = mkdtempSync(join(tmpdir(), 'router-memory-file-'));
      const db = openDatabase(join(fileDir, 'router.db'));
      try {
        migrate(db);
        const single = await engine(new SqliteDriver(db));
        await single.updateSettings({ staticModelPath: modelDir, embeddingOrder: ['static'] });
        const dog = await single.create({ type: 'factual', key: 'dog', content: 'Has a golden retriever puppy.' });
        const deleted = await single.create({ type: 'factual', key: 'gone', content: 'a puppy too' });
        await single.create({ type: 'factual', key: 'nothing', content: 'zzzz qqqq' }); // embedded, no vector
        await single.delete(deleted.id);
        await single.idle();
        const storage = await adapter.open();
        await copyTables(db, storage.driver as PostgresDriver);
        expect(await copyFileVectors(db, storage.driver)).toBe(1);
        const node = await engine(storage.driver);
        await node.updateSettings({});
        expect((await node.status()).vectorStore).toMatchObject({ rowCount: 1, needsReindex: 0 });
        const r = await node.retrieve({ query: 'my dog', strategy: 'semantic', limit: 5, maxTokens: 4000, scopes: [null], dryRun: true });
        expect(r.memories.map((m) => m.id)).toEqual([dog.id]);
      } finally {
        closeDatabase(db);
        rmSync(fileDir, { recursive: true, force: true });
      }
    });

    it('index rebuild time at N vectors (measured; ROUTER_MEMORY_REBUILD_N to change N)', async () => {
      const n = Number(process.env.ROUTER_MEMORY_REBUILD_N ?? 2000);
      const dims = 384;
      const storage = await adapter.open();
      const repo = new SqlMemoryRepository(storage.driver);
      await repo.adoptSignature(`static:bench:${dims}`, dims);
      const t0 = performance.now();
      for (let i = 0; i < n; i += 500) {
        const part = Array.from({ length: Math.min(500, n - i) }, (_v, j) => i + j);
        await storage.driver.run(
          `INSERT INTO memories (id, key, content, embedding_sig, created_at, updated_at) SELECT 'bench-' || g, 'k', 'c', 'static:bench:${dims}', '2026-01-01', '2026-01-01' FROM generate_series(${part[0]}, ${part.at(-1)}) AS g`,
        );
      }
      const seqs = (await storage.driver.query<{ seq: number }>('SELECT seq FROM memories ORDER BY seq')).map((r) => r.seq);
      for (let i = 0; i < seqs.length; i += 200) {
        const part = seqs.slice(i, i + 200);
        const values = part.map(() => '(?, ?, ?, ?, ?)').join(', ');
        const args = part.flatMap((seq) => {
          const v = benchVector(seq, dims);
          return [seq, '', `static:bench:${dims}`, Buffer.from(v.buffer), randomUUID()];
        });
        await storage.driver.run(`INSERT INTO memory_vectors (seq, scope, signature, embedding, rev) VALUES ${values}`, args);
      }
      const filled = performance.now() - t0;
      const fresh = new SqlMemoryRepository(await storage.connect());
      const t1 = performance.now();
      await fresh.syncVectors();
      const rebuild = performance.now() - t1;
      const t2 = performance.now();
      await fresh.syncVectors();
      const noop = performance.now() - t2;
      const t3 = performance.now();
      const hits = await fresh.knn(benchVector(seqs[5]!, dims), [null], 10);
      const search = performance.now() - t3;
      const count = await fresh.vecRowCount();
      fresh.close();
      repo.close();
      console.log(
        `memory index rebuild: ${n} vectors x ${dims} dims in ${rebuild.toFixed(0)} ms (sync with nothing changed ${noop.toFixed(0)} ms, knn ${search.toFixed(1)} ms; filling PostgreSQL took ${filled.toFixed(0)} ms)`,
      );
      expect(count).toBe(n);
      expect(hits[0]!.seq).toBe(seqs[5]);
      expect(rebuild).toBeLessThan(60_000);
    }, 300_000);
  });
}
