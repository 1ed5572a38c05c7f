import type { CliToolChange, CliToolChangeInput } from '../../shared/observability.js';

/** A page of the CLI-tool change log: newest first, `before` the id of the previous page's last change. */
export interface CliToolQuery {
  tool?: string;
  limit: number;
  before?: number;
}

/**
 * The CLI-tool change log's storage port (what `router config-tool` changed in coding agents' settings).
 * No snapshot: only its routes read it. Implemented over SQLite and PostgreSQL by `SqlCliToolLogRepository`
 * (test/insights/cli-tool-port.test.ts).
 */
export interface CliToolLogRepository {
  /** Stores a change made at `at` (unix ms), keeps only the newest `keep`, and returns it with its id. */
  record(at: number, input: CliToolChangeInput, keep: number): Promise<CliToolChange>;
  /** Up to `limit` changes, newest first. */
  list(q: CliToolQuery): Promise<CliToolChange[]>;
}
