import { createHash } from 'node:crypto';
import type { AuthInfo } from '../auth/pipeline.js';
import type { Logger } from '../logger.js';
import type { AuditRow, AuditTransport, McpAuditRepository, StoredAuditRow } from './audit-port.js';

export type { AuditTransport } from './audit-port.js';

/** One tool call as the audit log lists it (the arguments themselves are never stored). */
export type AuditEntry = { id: number; time: string } & Omit<StoredAuditRow, 'id' | 'ts'>;

/** How the audit log names a caller: its key, or how it authenticated. */
export function callerName(auth: AuthInfo): string {
  if (auth.key) return `key:${auth.key.id}`;
  if (auth.via === 'cli-token') return 'cli';
  if (auth.via === 'open-loopback') return 'loopback';
  return auth.via;
}

export const BUCKET_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
export type Bucket = keyof typeof BUCKET_MS;

/** How long a recorded call waits before its batch is stored, at most. */
const FLUSH_MS = 200;
/** A batch this large is stored at once. */
const FLUSH_ROWS = 200;
/** Rows kept in memory while storage fails (the oldest are dropped beyond it, and the log says so). */
const MAX_PENDING = 10_000;

/**
 * The MCP audit log: one row per tool call, and the per-tool statistics over time, through the audit port
 * (docs/storage.md). A call is noted in memory and stored with the next batch (within 200 ms, one multi-row
 * INSERT), never a database round trip of its own; a listing on this node first stores what it noted, so
 * it shows its own calls at once, and every node's within a batch interval.
 */
export class McpAudit {
  private pending: AuditRow[] = [];
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(
    private readonly repo: McpAuditRepository,
    private readonly log?: Logger,
  ) {}

  /** Records one finished call. `args` is the JSON text of the arguments (hashed and measured, not kept). */
  record(e: { ts: number; auth: AuthInfo; transport: AuditTransport; sessionId?: string; tool: string; args: string; durationMs: number; error?: string }): void {
    this.pending.push({
      ts: e.ts,
      caller: callerName(e.auth),
      keyId: e.auth.key?.id ?? null,
      transport: e.transport,
      sessionId: e.sessionId ?? null,
      tool: e.tool,
      argBytes: Buffer.byteLength(e.args),
      argSha256: createHash('sha256').update(e.args).digest('hex'),
      durationMs: Math.round(e.durationMs),
      ok: e.error === undefined,
      error: e.error === undefined ? null : e.error.slice(0, 500),
    });
    if (this.pending.length >= FLUSH_ROWS) void this.flush();
    else this.schedule(FLUSH_MS);
  }

  /** Stores the noted calls (one batch at a time, in order); a failed batch is kept for the next try. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(async () => {
      const batch = this.pending;
      if (batch.length === 0) return;
      this.pending = [];
      try {
        await this.repo.insertMany(batch);
      } catch (err) {
        this.pending = [...batch, ...this.pending];
        const over = this.pending.length - MAX_PENDING;
        if (over > 0) {
          this.pending.splice(0, over);
          this.dropped += over;
        }
        this.log?.warn('mcp audit write failed; kept for the next try', { rows: this.pending.length, dropped: this.dropped, error: err instanceof Error ? err.message : String(err) });
        this.schedule(1_000);
      }
    });
    return this.writing;
  }

  /**
   * Stores what is noted and stops the timer (the daemon is closing). The rows go to storage in this call,
   * not after a queued write: on SQLite they are on disk when it returns, before the database closes.
   */
  close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.writing;
    return this.repo.insertMany(batch).catch((err: unknown) => {
      this.log?.warn('mcp audit write failed at close', { rows: batch.length, error: err instanceof Error ? err.message : String(err) });
    });
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }

  /** Newest first, keyset-paged on the row id; filters by tool, caller and outcome. */
  async list(q: { limit: number; before?: number; tool?: string; caller?: string; ok?: boolean }): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
    await this.flush();
    const rows = await this.repo.list(q);
    const more = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    return {
      entries: page.map(({ id, ts, ...r }) => ({ id, time: new Date(ts).toISOString(), ...r })),
      nextCursor: more ? String(page[page.length - 1]!.id) : null,
    };
  }

  /** Calls, errors and mean duration per tool and time bucket (UTC), plus totals per tool over the range. */
  async stats(q: { bucket: Bucket; from: number; to: number }) {
    await this.flush();
    const rows = await this.repo.stats(BUCKET_MS[q.bucket], q.from, q.to);
    const totals = new Map<string, { tool: string; calls: number; errors: number }>();
    for (const r of rows) {
      const t = totals.get(r.tool) ?? { tool: r.tool, calls: 0, errors: 0 };
      t.calls += r.calls;
      t.errors += r.errors;
      totals.set(r.tool, t);
    }
    return {
      bucket: q.bucket,
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      tools: [...totals.values()].sort((a, b) => b.calls - a.calls),
      points: rows.map((r) => ({ time: new Date(r.bucket).toISOString(), tool: r.tool, calls: r.calls, errors: r.errors, avgDurationMs: Math.round(r.avgMs) })),
    };
  }

  /** Drops rows older than the retention. */
  prune(retentionDays: number, now = Date.now()): Promise<number> {
    return this.repo.prune(now - retentionDays * 86_400_000);
  }
}
