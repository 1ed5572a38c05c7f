import { boundedText } from '../net/bounded-read.js';

/**
 * External vector store (`external-vec`): a client of Qdrant's REST API. Points are keyed by the memory's
 * uuid and carry `{scope, seq}` as payload (scope = API key id, '' for the global pool). The embedded store
 * stays the source of truth: every vector is written there too, so retrieval falls back to it when this
 * store is down.
 */
export interface ExternalHealth {
  healthy: boolean | null;
  latencyMs: number | null;
  error: string | null;
}

export interface ExternalPoint {
  id: string;
  vector: Float32Array;
  payload: { scope: string; seq: number };
}

export class QdrantStore {
  private state: ExternalHealth = { healthy: null, latencyMs: null, error: null };
  private checkedAt = 0;

  constructor(
    readonly url: string,
    readonly collection: string,
    private readonly apiKey: string | null,
    private readonly timeoutMs: number,
  ) {}

  health(): ExternalHealth {
    return { ...this.state };
  }

  /** True when the last call failed less than `ms` ago (callers skip the store for a while). */
  recentlyDown(ms = 10_000): boolean {
    return this.state.healthy === false && Date.now() - this.checkedAt < ms;
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const t0 = performance.now();
    try {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (this.apiKey) headers['api-key'] = this.apiKey;
      const res = await fetch(`${this.url.replace(/\/+$/, '')}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // Search results and point batches are far below this; a larger reply is a failed call.
      const text = await boundedText(res, 32 * 1024 * 1024);
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (res.status >= 500) throw new Error(`external vector store answered ${res.status}`);
      this.record(true, performance.now() - t0, null);
      return { status: res.status, json };
    } catch (err) {
      const e = err as Error;
      const msg = e.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : e.message.startsWith('external') ? e.message : `unreachable (${(e.cause as Error | undefined)?.message ?? e.message})`;
      this.record(false, null, msg);
      throw new Error(msg);
    }
  }

  private record(ok: boolean, latencyMs: number | null, error: string | null): void {
    this.checkedAt = Date.now();
    this.state = { healthy: ok, latencyMs: latencyMs === null ? null : Math.round(latencyMs * 100) / 100, error };
  }

  private fail(what: string, r: { status: number; json: any }): never {
    const detail = r.json?.status?.error ?? r.json?.status ?? '';
    const msg = `external vector store ${what} failed (${r.status}${detail ? `: ${String(typeof detail === 'string' ? detail : JSON.stringify(detail)).slice(0, 200)}` : ''})`;
    this.record(false, this.state.latencyMs, msg);
    throw new Error(msg);
  }

  private get base(): string {
    return `/collections/${encodeURIComponent(this.collection)}`;
  }

  /** Pings the store (reads the collection); updates health and latency. */
  async check(): Promise<ExternalHealth> {
    try {
      await this.call('GET', this.base);
    } catch {
      // recorded
    }
    return this.health();
  }

  /** Creates the collection for vectors of this width; with `recreate`, an existing one is dropped first. */
  async ensureCollection(dimensions: number, recreate: boolean): Promise<void> {
    const cur = await this.call('GET', this.base);
    const size = cur.json?.result?.config?.params?.vectors?.size;
    if (cur.status === 200 && !recreate && size === dimensions) return;
    if (cur.status === 200) {
      const del = await this.call('DELETE', this.base);
      if (del.status >= 400) this.fail('collection delete', del);
    }
    const made = await this.call('PUT', this.base, { vectors: { size: dimensions, distance: 'Cosine' } });
    if (made.status >= 400) this.fail('collection create', made);
  }

  async upsert(points: ExternalPoint[]): Promise<void> {
    if (points.length === 0) return;
    const r = await this.call('PUT', `${this.base}/points?wait=true`, {
      points: points.map((p) => ({ id: p.id, vector: Array.from(p.vector), payload: p.payload })),
    });
    if (r.status >= 400) this.fail('upsert', r);
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const r = await this.call('POST', `${this.base}/points/delete?wait=true`, { points: ids });
    if (r.status >= 400 && r.status !== 404) this.fail('delete', r);
  }

  /** Nearest points among the partitions; score is Qdrant's cosine similarity. */
  async search(vector: Float32Array, scopes: string[], limit: number): Promise<Array<{ id: string; score: number }>> {
    const r = await this.call('POST', `${this.base}/points/search`, {
      vector: Array.from(vector),
      limit,
      with_payload: false,
      filter: { must: [{ key: 'scope', match: { any: scopes } }] },
    });
    if (r.status >= 400) this.fail('search', r);
    const result = r.json?.result;
    if (!Array.isArray(result)) this.fail('search', { status: r.status, json: { status: 'reply has no result array' } });
    return (result as Array<{ id: unknown; score: unknown }>).map((p) => ({ id: String(p.id), score: Number(p.score) }));
  }
}
