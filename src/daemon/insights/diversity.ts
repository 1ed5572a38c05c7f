import type { SqlExecutor } from '../store/driver.js';
import { BUCKET_MS, bucketSql, NULLS_FIRST, UNPRICED, type Bucket, type Range } from '../usage/queries.js';

export type DiversityBy = 'provider' | 'model' | 'account';
export type DiversityMetric = 'requests' | 'tokens' | 'cost';

/** How concentrated a distribution is. */
export interface Concentration {
  /** Herfindahl-Hirschman index: the sum of squared shares, 0..1 (1 = everything on one). */
  hhi: number;
  /** 1 / HHI: how many equally used groups would give the same concentration. */
  effectiveCount: number | null;
  /** Shannon entropy of the shares, in bits (0 = one group; log2(n) = n groups equally). */
  entropyBits: number;
  /** Entropy divided by log2(groups): 1 = perfectly even, 0 = one group (null with fewer than two groups). */
  evenness: number | null;
}

export interface DiversityGroup {
  key: string | null;
  requests: number;
  tokens: number;
  /** Sum over the group's priced rows. */
  costUsd: number;
  /** The group's rows with no known price: left out of costUsd (and of the shares by cost), never counted as $0. */
  unpricedRequests: number;
  /** This group's part of the chosen metric, 0..1. */
  share: number;
}

export interface DiversityPoint extends Concentration {
  t: string;
  total: number;
  /** Share per group key in this bucket (groups without traffic left out). */
  shares: Record<string, number>;
}

const COLUMN: Record<DiversityBy, string> = { provider: 'provider', model: "provider || '/' || model", account: 'connection_id' };

const round = (n: number, d = 6) => Math.round(n * 10 ** d) / 10 ** d;

/** HHI and Shannon entropy of a list of non-negative weights. */
export function concentration(weights: readonly number[]): Concentration {
  const total = weights.reduce((a, b) => a + b, 0);
  const used = weights.filter((w) => w > 0);
  if (total <= 0 || used.length === 0) return { hhi: 0, effectiveCount: null, entropyBits: 0, evenness: null };
  let hhi = 0;
  let entropy = 0;
  for (const w of used) {
    const p = w / total;
    hhi += p * p;
    entropy -= p * Math.log2(p);
  }
  return {
    hhi: round(hhi),
    effectiveCount: round(1 / hhi, 4),
    entropyBits: round(Math.max(0, entropy)),
    evenness: used.length > 1 ? round(entropy / Math.log2(used.length)) : null,
  };
}

interface Row {
  b: number;
  grp: string | null;
  requests: number;
  tokens: number;
  cost: number;
  unpriced: number;
}

const weightOf = (metric: DiversityMetric, r: { requests: number; tokens: number; cost: number }) =>
  metric === 'requests' ? r.requests : metric === 'tokens' ? r.tokens : r.cost;

/**
 * How traffic spread over providers, models or accounts (connections) in a time range: each group's share
 * of the chosen metric, the concentration overall, and per time bucket (empty buckets have total 0).
 * Every usage row counts (failed attempts too: they are traffic sent to that upstream); rows router
 * answered itself (provider `router`, no account) are left out.
 */
export async function diversity(db: SqlExecutor, by: DiversityBy, metric: DiversityMetric, bucket: Bucket, range: Range) {
  const size = BUCKET_MS[bucket];
  const rows = await db.query<Row>(
    `SELECT ${bucketSql(size)} AS b, ${COLUMN[by]} AS grp, COUNT(*) AS requests,
       COALESCE(SUM(tokens_in + tokens_out), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost,
       COALESCE(SUM(${UNPRICED}), 0) AS unpriced
     FROM usage_log WHERE ts >= ? AND ts < ? AND provider <> 'router' GROUP BY ${bucketSql(size)}, ${COLUMN[by]} ORDER BY b, ${NULLS_FIRST(COLUMN[by])}`,
    [range.from, range.to],
  );
  const groups = new Map<string | null, { requests: number; tokens: number; cost: number; unpriced: number }>();
  const buckets = new Map<number, Row[]>();
  for (const r of rows) {
    const g = groups.get(r.grp) ?? { requests: 0, tokens: 0, cost: 0, unpriced: 0 };
    g.requests += r.requests;
    g.unpriced += r.unpriced;
    g.tokens += r.tokens;
    g.cost += r.cost;
    groups.set(r.grp, g);
    const list = buckets.get(r.b) ?? [];
    list.push(r);
    buckets.set(r.b, list);
  }
  const total = [...groups.values()].reduce((n, g) => n + weightOf(metric, g), 0);
  const list: DiversityGroup[] = [...groups.entries()]
    .map(([key, g]) => ({ key, requests: g.requests, tokens: g.tokens, costUsd: round(g.cost, 12), unpricedRequests: g.unpriced, share: total > 0 ? round(weightOf(metric, g) / total) : 0 }))
    .sort((a, b) => b.share - a.share || b.requests - a.requests);
  const series: DiversityPoint[] = [];
  for (let t = Math.floor(range.from / size) * size; t < range.to; t += size) {
    const inBucket = buckets.get(t) ?? [];
    const weights = inBucket.map((r) => weightOf(metric, r));
    const sum = weights.reduce((a, b) => a + b, 0);
    const shares: Record<string, number> = {};
    inBucket.forEach((r, i) => {
      if (weights[i]! > 0) shares[r.grp ?? ''] = round(weights[i]! / sum);
    });
    series.push({ t: new Date(t).toISOString(), total: round(sum, 12), shares, ...concentration(weights) });
  }
  const unpricedRequests = list.reduce((n, g) => n + g.unpricedRequests, 0);
  return { total: round(total, 12), unpricedRequests, groups: list, ...concentration(list.map((g) => weightOf(metric, { requests: g.requests, tokens: g.tokens, cost: g.costUsd }))), series };
}
