import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCorpus, memoryChecksum, startApp, writeStaticModel, type TestApp } from './helpers.js';
import { loadStaticModel } from '../../src/daemon/memory/embedding/static.js';
import { ftsQuery } from '../../src/daemon/memory/fts.js';

let t: TestApp;
let modelDir: string;
const idOf = new Map<string, string>(); // fixture id -> memory uuid
const fixtureOf = new Map<string, string>();

beforeAll(async () => {
  modelDir = mkdtempSync(join(tmpdir(), 'router-static-model-'));
  writeStaticModel(modelDir);
  t = await startApp();
  const s = await t.request('PUT', '/api/memory/settings', { staticModelPath: modelDir, embeddingOrder: ['static'] });
  expect(s.status).toBe(200);
  for (const m of loadCorpus().memories) {
    const r = await t.request('POST', '/api/memory', { type: m.type, key: m.key, content: m.content });
    expect(r.status).toBe(201);
    idOf.set(m.id, r.json.id);
    fixtureOf.set(r.json.id, m.id);
  }
});
afterAll(() => {
  t.close();
  rmSync(modelDir, { recursive: true, force: true });
});

async function preview(body: Record<string, unknown>) {
  const r = await t.request('POST', '/api/memory/retrieve-preview', body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

async function recallAt5(strategy: string): Promise<{ recall: number; perQuery: number[] }> {
  const perQuery: number[] = [];
  for (const q of loadCorpus().queries) {
    const r = await preview({ query: q.query, strategy, limit: 5, maxTokens: 16000 });
    expect(r.resolution.strategyUsed).toBe(strategy);
    const got = new Set(r.memories.map((m: any) => fixtureOf.get(m.id)));
    perQuery.push(q.relevant.filter((id) => got.has(id)).length / q.relevant.length);
  }
  return { recall: perQuery.reduce((a, b) => a + b, 0) / perQuery.length, perQuery };
}

describe('static embedding model', () => {
  it('tokenizes words and ## pieces, mean-pools and normalizes', () => {
    const m = loadStaticModel(modelDir);
    expect(m.dimensions).toBe(16);
    const dog = m.embedOne('dog');
    const puppy = m.embedOne('Puppy!');
    const tax = m.embedOne('spreadsheet');
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
    expect(dot(dog, dog)).toBeCloseTo(1, 5);
    expect(dot(dog, puppy)).toBeGreaterThan(0.9);
    expect(dot(dog, tax)).toBeLessThan(0.3);
    expect(m.embedOne('zzzz qqqq').every((x) => x === 0)).toBe(true);
    // "retrievers" is not in the vocabulary: the longest known prefix ("retriever") is used, "##s" is unknown.
    expect(dot(m.embedOne('retrievers'), m.embedOne('retriever'))).toBeCloseTo(1, 5);
    expect(m.tokenize('retrievers')).toEqual(m.tokenize('retriever'));
  });

  it('reads a model2vec folder (model.safetensors + tokenizer.json)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-m2v-'));
    try {
      const vocab = { '[UNK]': 0, dog: 1, cat: 2, car: 3 };
      const rows = [
        [0, 0, 0],
        [1, 0.1, 0],
        [0.9, 0.2, 0],
        [0, 0, 1],
      ];
      const data = Buffer.alloc(4 * 3 * 4);
      rows.flat().forEach((v, i) => data.writeFloatLE(v, i * 4));
      const header = Buffer.from(JSON.stringify({ embeddings: { dtype: 'F32', shape: [4, 3], data_offsets: [0, data.length] } }));
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(header.length));
      writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([len, header, data]));
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ model: { type: 'WordPiece', vocab } }));
      const m = loadStaticModel(dir);
      expect(m.dimensions).toBe(3);
      const v = m.embedOne('Dog and cat');
      expect(v[0]!).toBeGreaterThan(0.9);
      expect(m.embedOne('car')[2]).toBeCloseTo(1, 5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects incomplete folders with a reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-bad-model-'));
    try {
      expect(() => loadStaticModel(dir)).toThrow(/vocab\.txt/);
      writeFileSync(join(dir, 'vocab.txt'), 'a\nb\n');
      writeFileSync(join(dir, 'embeddings.f32'), Buffer.alloc(12));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ dimensions: 2 }));
      expect(() => loadStaticModel(dir)).toThrow(/embeddings\.f32 holds 3 values/);
      expect(() => loadStaticModel(join(dir, 'missing'))).toThrow(/not found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('retrieval', () => {
  it('engine status reports the static source and the embedded store', async () => {
    await t.services.memory.idle();
    const s = (await t.request('GET', '/api/memory/engine-status')).json;
    expect(s.embedding).toMatchObject({ source: 'static', model: 'topic-static', dimensions: 16, available: true });
    expect(s.vectorStore).toMatchObject({ backend: 'embedded-vec', available: true, rowCount: loadCorpus().memories.length, needsReindex: 0 });
  });

  it('hybrid beats keyword-only on recall@5 over the labelled corpus', async () => {
    const exact = await recallAt5('exact');
    const semantic = await recallAt5('semantic');
    const hybrid = await recallAt5('hybrid');
    const fmt = (x: number) => x.toFixed(3);
    console.log(
      `memory recall@5 over ${loadCorpus().queries.length} queries / ${loadCorpus().memories.length} memories: ` +
        `exact ${fmt(exact.recall)}, semantic ${fmt(semantic.recall)}, hybrid ${fmt(hybrid.recall)}`,
    );
    expect(hybrid.recall).toBeGreaterThan(exact.recall);
    expect(hybrid.recall).toBeGreaterThanOrEqual(0.8);
    // Queries that share words with their memory stay found by hybrid.
    const corpus = loadCorpus();
    corpus.queries.forEach((q, i) => {
      if (exact.perQuery[i] === 1) expect(hybrid.perQuery[i], q.query).toBeGreaterThan(0);
    });
  });

  it('each memory reports score, tier, vecScore, ftsScore, tokens; resolution says what was used', async () => {
    const h = await preview({ query: 'tennis on Saturdays', strategy: 'hybrid' });
    expect(h.resolution).toEqual({ embeddingSource: 'static', embeddingModel: 'topic-static', vectorStore: 'embedded-vec', strategyUsed: 'hybrid', rerankApplied: false, fallbackReason: null });
    const top = h.memories[0];
    expect(fixtureOf.get(top.id)).toBe('m23');
    expect(top).toMatchObject({ type: 'factual', key: 'tennis', tier: 'hybrid-rrf', tokens: expect.any(Number) });
    expect(top.vecScore).toBeGreaterThan(0.5);
    expect(top.ftsScore).toBeGreaterThan(0);
    expect(top.score).toBeCloseTo(2 / 61, 6); // rank 1 in both lists
    for (const m of h.memories) {
      expect(Object.keys(m).sort()).toEqual(['content', 'ftsScore', 'id', 'key', 'score', 'tier', 'tokens', 'type', 'vecScore']);
      expect(['fts5', 'vector', 'hybrid-rrf']).toContain(m.tier);
      if (m.tier === 'fts5') expect(m.vecScore).toBeNull();
      if (m.tier === 'vector') expect(m.ftsScore).toBeNull();
    }
    const e = await preview({ query: 'tennis', strategy: 'exact' });
    expect(e.resolution).toMatchObject({ strategyUsed: 'exact', embeddingSource: null, vectorStore: 'none', fallbackReason: null });
    expect(e.memories.every((m: any) => m.tier === 'fts5' && m.vecScore === null && m.score === m.ftsScore)).toBe(true);
    const s = await preview({ query: 'canine companion puppy', strategy: 'semantic' });
    expect(s.resolution).toMatchObject({ strategyUsed: 'semantic', embeddingSource: 'static', vectorStore: 'embedded-vec' });
    expect(s.memories.every((m: any) => m.tier === 'vector' && m.ftsScore === null && m.score === m.vecScore)).toBe(true);
    expect(['m01', 'm34']).toContain(fixtureOf.get(s.memories[0].id));
    // Scores are ordered.
    for (const r of [h, e, s]) for (let i = 1; i < r.memories.length; i++) expect(r.memories[i - 1].score).toBeGreaterThanOrEqual(r.memories[i].score);
  });

  it('packs into the token budget with gpt-tokenizer counts and honours limit', async () => {
    const all = await preview({ query: 'What exercise does the user do? tennis marathon bike', strategy: 'hybrid', limit: 100, maxTokens: 16000 });
    expect(all.memories.length).toBeGreaterThan(2);
    const first = all.memories[0];
    const tight = await preview({ query: 'What exercise does the user do? tennis marathon bike', strategy: 'hybrid', maxTokens: first.tokens });
    expect(tight.memories[0].id).toBe(first.id);
    expect(tight.totalTokensUsed).toBeLessThanOrEqual(first.tokens);
    expect(tight.budgetMaxTokens).toBe(first.tokens);
    const budget = first.tokens + all.memories[1].tokens + 1;
    const mid = await preview({ query: 'What exercise does the user do? tennis marathon bike', strategy: 'hybrid', maxTokens: budget });
    expect(mid.totalTokensUsed).toBe(mid.memories.reduce((s: number, m: any) => s + m.tokens, 0));
    expect(mid.totalTokensUsed).toBeLessThanOrEqual(budget);
    const none = await preview({ query: 'tennis', maxTokens: 1 });
    expect(none.memories).toEqual([]);
    expect(none.totalTokensUsed).toBe(0);
    const one = await preview({ query: 'What exercise does the user do?', limit: 1 });
    expect(one.memories).toHaveLength(1);
    // Token counts are gpt-tokenizer's of "key: content".
    const { countTokens } = await import('gpt-tokenizer');
    const m = (await t.services.memory.get(first.id))!;
    expect(first.tokens).toBe(countTokens(`${m.key}: ${m.content}`));
  });

  it('scopes: apiKeyId omitted = global pool only; a key sees its own pool', async () => {
    const own = await t.request('POST', '/api/memory', { key: 'tennis coach', content: 'Takes tennis lessons from coach Rui.', apiKeyId: 'scope-k1' });
    const g = await preview({ query: 'tennis lessons coach' });
    expect(g.memories.map((m: any) => m.id)).not.toContain(own.json.id);
    const k = await preview({ query: 'tennis lessons coach', apiKeyId: 'scope-k1' });
    expect(k.memories.map((m: any) => m.id)).toEqual([own.json.id]);
    const ks = await preview({ query: 'tennis lessons coach', apiKeyId: 'scope-k1', strategy: 'semantic' });
    expect(ks.memories.map((m: any) => m.id)).toEqual([own.json.id]);
  });

  it('expired entries are never returned by retrieval, and are pruned', async () => {
    const e = await t.request('POST', '/api/memory', { key: 'tennis racket', content: 'Tennis racket restrung weekly.', expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await preview({ query: 'tennis racket' })).memories.map((m: any) => m.id)).toContain(e.json.id);
    await new Promise((r) => setTimeout(r, 1600));
    for (const strategy of ['exact', 'semantic', 'hybrid']) {
      expect((await preview({ query: 'tennis racket', strategy })).memories.map((m: any) => m.id)).not.toContain(e.json.id);
    }
    const seq = (t.services.db.prepare('SELECT seq FROM memories WHERE id = ?').get(e.json.id) as { seq: number }).seq;
    expect(t.services.db.prepare('SELECT count(*) AS n FROM memories_vec WHERE rowid = ?').get(BigInt(seq))).toEqual({ n: 1 });
    await t.services.memory.prune();
    expect(t.services.db.prepare('SELECT count(*) AS n FROM memories WHERE id = ?').get(e.json.id)).toEqual({ n: 0 });
    expect(t.services.db.prepare('SELECT count(*) AS n FROM memories_vec WHERE rowid = ?').get(BigInt(seq))).toEqual({ n: 0 });
  });

  it('retrieve-preview leaves the database byte-identical (checksum of rows) and touches no hit counter', async () => {
    await t.services.memory.idle();
    const before = memoryChecksum(t.services);
    for (const strategy of ['exact', 'semantic', 'hybrid']) {
      for (const q of loadCorpus().queries.slice(0, 6)) await preview({ query: q.query, strategy, limit: 10 });
    }
    expect(memoryChecksum(t.services)).toBe(before);
    const hits = t.services.db.prepare('SELECT sum(hit_count) AS n FROM memories').get() as { n: number };
    expect(hits.n).toBe(0);
  });

  it('PUT regenerates the vector; DELETE removes row, FTS entry and vector', async () => {
    const c = await t.request('POST', '/api/memory', { key: 'note', content: 'spreadsheet expenses' });
    const row = () => t.services.db.prepare('SELECT seq, embedding_sig FROM memories WHERE id = ?').get(c.json.id) as { seq: number; embedding_sig: string };
    const { seq } = row();
    const vec = async () => (await t.services.memory.store.vector(seq))!;
    const before = await vec();
    expect(before).toHaveLength(16);
    expect(row().embedding_sig).toBe('static:topic-static:16');
    await t.request('PUT', `/api/memory/${c.json.id}`, { content: 'golden retriever puppy' });
    const after = await vec();
    expect(Array.from(after)).not.toEqual(Array.from(before));
    const sem = await preview({ query: 'dog', strategy: 'semantic', limit: 100 });
    expect(sem.memories.map((m: any) => m.id)).toContain(c.json.id);
    expect((await t.request('DELETE', `/api/memory/${c.json.id}`)).json).toEqual({ success: true });
    expect(await t.services.memory.store.vector(seq)).toBeUndefined();
    expect(t.services.db.prepare('SELECT count(*) AS n FROM memories_fts WHERE rowid = ?').get(seq)).toEqual({ n: 0 });
  });

  it('sanitizes FTS input into quoted terms', () => {
    expect(ftsQuery('What is "NEAR(x" AND y*?')).toBe('"near" OR "x" OR "y"');
    expect(ftsQuery('the')).toBe('"the"');
    expect(ftsQuery('!!! ***')).toBe('');
  });
});

describe('sqlite-vec with BigInt rowids', () => {
  it('vec0 refuses plain numbers as primary keys; the store passes BigInt', () => {
    const db = t.services.db;
    const v = new Float32Array(16).fill(0.25);
    expect(() => db.prepare('INSERT INTO memories_vec (rowid, scope, embedding) VALUES (?, ?, ?)').run(999_999, '', v)).toThrow(/integer|primary key/i);
    db.prepare('INSERT INTO memories_vec (rowid, scope, embedding) VALUES (?, ?, ?)').run(999_999n, '', v);
    const knn = db.prepare('SELECT rowid, distance FROM memories_vec WHERE embedding MATCH ? AND k = 1 AND scope = ?').get(v, '') as { rowid: number; distance: number };
    expect(knn.rowid).toBe(999_999);
    expect(knn.distance).toBeCloseTo(0, 5);
    db.prepare('DELETE FROM memories_vec WHERE rowid = ?').run(999_999n);
  });
});

describe('reindex after a signature change', () => {
  it('a new model marks every row (needsReindex), the reindex route fills them, retrieval uses the new vectors', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'router-static-model2-'));
    try {
      writeStaticModel(dir2, { name: 'topic-static-wide', extraDims: 8 });
      await t.request('PUT', '/api/memory/settings', { autoReindex: false });
      const put = await t.request('PUT', '/api/memory/settings', { staticModelPath: dir2 });
      expect(put.status).toBe(200);
      const total = (t.services.db.prepare('SELECT count(*) AS n FROM memories WHERE expires_at IS NULL').get() as { n: number }).n;
      let s = (await t.request('GET', '/api/memory/engine-status')).json;
      expect(s.embedding).toMatchObject({ source: 'static', model: 'topic-static-wide', dimensions: 24 });
      expect(s.vectorStore).toMatchObject({ rowCount: 0, needsReindex: total });
      expect(await t.services.memory.store.meta('embedding_signature')).toBe('static:topic-static-wide:24');
      // Keyword retrieval still works while vectors are missing; semantic finds nothing yet.
      expect((await preview({ query: 'tennis', strategy: 'semantic' })).memories).toEqual([]);
      const r = await t.request('POST', '/api/memory/reindex', {});
      expect(r.json).toEqual({ signature: 'static:topic-static-wide:24', pending: 0, error: null });
      s = (await t.request('GET', '/api/memory/engine-status')).json;
      expect(s.vectorStore).toMatchObject({ rowCount: total, needsReindex: 0 });
      const sem = await preview({ query: 'puppy', strategy: 'semantic' });
      expect(['m01', 'm34']).toContain(fixtureOf.get(sem.memories[0].id));
      // Full reindex re-embeds every row.
      expect((await t.request('POST', '/api/memory/reindex', { full: true })).json.pending).toBe(0);
      // Background reindex: back to the first model with autoReindex on.
      await t.request('PUT', '/api/memory/settings', { autoReindex: true, staticModelPath: modelDir });
      await t.services.memory.idle();
      s = (await t.request('GET', '/api/memory/engine-status')).json;
      expect(s.embedding.dimensions).toBe(16);
      expect(s.vectorStore).toMatchObject({ rowCount: total, needsReindex: 0 });
    } finally {
      rmSync(dir2, { recursive: true, force: true });
    }
  });

  it('switching A -> B -> A without reindexing in between leaves every row pending, not silently vector-less', async () => {
    const dir2 = mkdtempSync(join(tmpdir(), 'router-static-model3-'));
    try {
      writeStaticModel(dir2, { name: 'topic-static-b', extraDims: 4 });
      await t.request('PUT', '/api/memory/settings', { autoReindex: false });
      await t.request('PUT', '/api/memory/settings', { staticModelPath: dir2 });
      await t.request('PUT', '/api/memory/settings', { staticModelPath: modelDir });
      const total = (t.services.db.prepare('SELECT count(*) AS n FROM memories WHERE expires_at IS NULL').get() as { n: number }).n;
      expect((await t.request('GET', '/api/memory/engine-status')).json.vectorStore).toMatchObject({ rowCount: 0, needsReindex: total });
      expect((await t.request('POST', '/api/memory/reindex', {})).json.pending).toBe(0);
      expect((await t.request('GET', '/api/memory/engine-status')).json.vectorStore).toMatchObject({ rowCount: total, needsReindex: 0 });
    } finally {
      await t.request('PUT', '/api/memory/settings', { autoReindex: true });
      rmSync(dir2, { recursive: true, force: true });
    }
  });

  it('the signature survives a restart: no reindex when nothing changed', async () => {
    const { bootServices, closeServices } = await import('../../src/daemon/boot.js');
    const { Logger } = await import('../../src/daemon/logger.js');
    const sigBefore = await t.services.memory.store.meta('embedding_signature');
    // A second handle on the same database sees the same signature and vectors.
    const other = await bootServices({ home: t.home, host: '127.0.0.1', port: 0, log: new Logger({}) });
    try {
      await other.memory.ready();
      expect(await other.memory.store.meta('embedding_signature')).toBe(sigBefore);
      const st = await other.memory.status();
      expect(st.vectorStore.needsReindex).toBe(0);
      expect(st.vectorStore.rowCount).toBeGreaterThan(0);
    } finally {
      closeServices(other);
    }
  });
});
