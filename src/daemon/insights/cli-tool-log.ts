import type { CliToolChange, CliToolChangeInput } from '../../shared/observability.js';
import type { CliToolLogRepository, CliToolQuery } from './cli-tool-port.js';

/** Changes older than this many are pruned on insert: the log is a history, not an archive. */
const KEEP = 5_000;

/**
 * What `router config-tool` changed in coding agents' settings (reported by the CLI after each write),
 * behind the `CliToolLogRepository` port (SQLite or PostgreSQL).
 */
export class CliToolLog {
  constructor(private readonly repo: CliToolLogRepository) {}

  record(input: CliToolChangeInput): Promise<CliToolChange> {
    return this.repo.record(Date.now(), input, KEEP);
  }

  /** Newest first; `before` is the id of the last change of the previous page. */
  async list(q: CliToolQuery): Promise<{ changes: CliToolChange[]; nextCursor: string | null }> {
    const rows = await this.repo.list({ ...q, limit: q.limit + 1 });
    const more = rows.length > q.limit;
    const shown = more ? rows.slice(0, q.limit) : rows;
    return { changes: shown, nextCursor: more ? String(shown[shown.length - 1]!.id) : null };
  }
}
