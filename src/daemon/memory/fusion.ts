/**
 * The pure half of retrieval: fusing full-text and vector hits into one order, folding a reranker's order
 * in, and packing the best entries into a token budget. No I/O; the service feeds it hits and rows.
 */
import type { StoredMemory } from './store.js';
import type { RetrievedMemory, Strategy, Tier } from './types.js';

/** Reciprocal rank fusion's constant (the usual 60): a hit at rank r adds 1 / (60 + r + 1). */
export const RRF_K = 60;

/** One candidate entry, by its row sequence number. */
export interface Candidate {
  seq: number;
  score: number;
  tier: Tier;
  vecScore: number | null;
  ftsScore: number | null;
}

/**
 * Fuses hits (each map in rank order, seq -> score): `exact` orders by the BM25 score, `semantic` by the
 * similarity, `hybrid` by reciprocal rank fusion of both. A candidate found both ways is `hybrid-rrf`, by
 * vectors only `vecTier` (embedded or external), else `fts5`. Best first; ties by seq.
 */
export function fuse(strategy: Strategy, ftsHits: ReadonlyMap<number, number>, vecHits: ReadonlyMap<number, number>, vecTier: Tier): Candidate[] {
  const cands = new Map<number, Candidate>();
  const add = (seq: number): Candidate => {
    let c = cands.get(seq);
    if (!c) cands.set(seq, (c = { seq, score: 0, tier: 'fts5', vecScore: null, ftsScore: null }));
    return c;
  };
  if (strategy === 'exact' || strategy === 'hybrid') {
    let rank = 0;
    for (const [seq, s] of ftsHits) {
      const c = add(seq);
      c.ftsScore = s;
      c.score += strategy === 'hybrid' ? 1 / (RRF_K + rank + 1) : s;
      rank++;
    }
  }
  if (strategy === 'semantic' || strategy === 'hybrid') {
    let rank = 0;
    for (const [seq, s] of vecHits) {
      const c = add(seq);
      c.vecScore = s;
      c.score += strategy === 'hybrid' ? 1 / (RRF_K + rank + 1) : s;
      rank++;
    }
  }
  for (const c of cands.values()) {
    if (c.vecScore !== null && c.ftsScore !== null) c.tier = 'hybrid-rrf';
    else if (c.vecScore !== null) c.tier = vecTier;
    else c.tier = 'fts5';
  }
  return [...cands.values()].sort((a, b) => b.score - a.score || a.seq - b.seq);
}

/**
 * A reranker's verdict on the head of the order: the head reordered by its scores (an index it names twice
 * counts once; head entries it left out follow in their fused order), then the rest unchanged.
 */
export function applyRerank(ordered: readonly Candidate[], headLength: number, ranked: ReadonlyArray<{ index: number; score: number }>): Candidate[] {
  const head = ordered.slice(0, headLength);
  const seen = new Set<number>();
  const reordered: Candidate[] = [];
  for (const r of [...ranked].sort((a, b) => b.score - a.score)) {
    if (seen.has(r.index) || !head[r.index]) continue;
    seen.add(r.index);
    reordered.push({ ...head[r.index]!, score: r.score });
  }
  head.forEach((c, i) => seen.has(i) || reordered.push(c));
  return [...reordered, ...ordered.slice(head.length)];
}

/** Packs entries into the token budget, best first: one that does not fit is skipped, smaller ones may follow. */
export function packIntoBudget(
  ordered: readonly Candidate[],
  rows: ReadonlyMap<number, StoredMemory>,
  limit: number,
  maxTokens: number,
): { memories: RetrievedMemory[]; picked: number[]; used: number } {
  const memories: RetrievedMemory[] = [];
  const picked: number[] = [];
  let used = 0;
  for (const c of ordered) {
    if (memories.length >= limit) break;
    const m = rows.get(c.seq);
    if (!m || used + m.tokens > maxTokens) continue;
    used += m.tokens;
    picked.push(c.seq);
    memories.push({ id: m.id, type: m.type, key: m.key, content: m.content, score: c.score, tokens: m.tokens, tier: c.tier, vecScore: c.vecScore, ftsScore: c.ftsScore });
  }
  return { memories, picked, used };
}
