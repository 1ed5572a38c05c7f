import { describe, expect, it } from 'vitest';
import { applyRerank, fuse, packIntoBudget, RRF_K } from '../../src/daemon/memory/fusion.js';
import type { StoredMemory } from '../../src/daemon/memory/store.js';

/** The pure half of retrieval: fusion, rerank folding and budget packing, without a database. */
const fts = new Map([
  [1, 9.5],
  [2, 7.0],
]);
const vec = new Map([
  [2, 0.91],
  [3, 0.8],
]);

describe('memory fusion', () => {
  it('exact orders by BM25, semantic by similarity, hybrid by reciprocal rank fusion with tiers', () => {
    expect(fuse('exact', fts, vec, 'vector').map((c) => [c.seq, c.score, c.tier])).toEqual([
      [1, 9.5, 'fts5'],
      [2, 7.0, 'fts5'],
    ]);
    expect(fuse('semantic', fts, vec, 'external-vec').map((c) => [c.seq, c.tier])).toEqual([
      [2, 'external-vec'],
      [3, 'external-vec'],
    ]);
    const hybrid = fuse('hybrid', fts, vec, 'vector');
    expect(hybrid.map((c) => c.seq)).toEqual([2, 1, 3]);
    expect(hybrid[0]).toMatchObject({ tier: 'hybrid-rrf', ftsScore: 7.0, vecScore: 0.91, score: 1 / (RRF_K + 2) + 1 / (RRF_K + 1) });
    expect(hybrid[1]).toMatchObject({ tier: 'fts5', score: 1 / (RRF_K + 1) });
  });

  it('a rerank reorders the head only; entries it left out follow; repeated or unknown indexes are ignored', () => {
    const ordered = fuse('exact', new Map([[1, 4], [2, 3], [3, 2], [4, 1]]), new Map(), 'vector');
    const out = applyRerank(ordered, 3, [
      { index: 2, score: 0.9 },
      { index: 0, score: 0.5 },
      { index: 2, score: 0.1 },
      { index: 7, score: 0.99 },
    ]);
    expect(out.map((c) => [c.seq, c.score])).toEqual([
      [3, 0.9],
      [1, 0.5],
      [2, 3],
      [4, 1],
    ]);
  });

  it('packs best first within the budget and the limit, skipping an entry that does not fit', () => {
    const row = (seq: number, tokens: number) => [seq, { seq, id: `m${seq}`, type: 'fact', key: `k${seq}`, content: 'c', tokens } as unknown as StoredMemory] as const;
    const rows = new Map([row(1, 50), row(2, 80), row(3, 20), row(4, 10)]);
    const ordered = fuse('exact', new Map([[1, 4], [2, 3], [3, 2], [4, 1]]), new Map(), 'vector');
    const packed = packIntoBudget(ordered, rows, 2, 100);
    expect(packed.memories.map((m) => m.id)).toEqual(['m1', 'm3']);
    expect(packed.used).toBe(70);
    expect(packed.picked).toEqual([1, 3]);
  });
});
