import type { Db } from '../store/db.js';
import type { CliToolChange, CliToolChangeInput } from '../../shared/observability.js';

interface Row {
  id: number;
  at: number;
  tool: string;
  action: string;
  files: string;
  backup: string | null;
  key_id: string | null;
  model: string | null;
  base_url: string | null;
}

const toChange = (r: Row): CliToolChange => ({
  id: r.id,
  at: new Date(r.at).toISOString(),
  tool: r.tool,
  action: r.action as CliToolChange['action'],
  files: JSON.parse(r.files) as CliToolChange['files'],
  backup: r.backup,
  keyId: r.key_id,
  model: r.model,
  baseUrl: r.base_url,
});

/** Changes older than this many are pruned on insert: the log is a history, not an archive. */
const KEEP = 5_000;

/** What `router config-tool` changed in coding agents' settings (reported by the CLI after each write). */
export class CliToolLog {
  constructor(private readonly db: Db) {}

  record(input: CliToolChangeInput): CliToolChange {
    const at = Date.now();
    const { lastInsertRowid } = this.db
      .prepare('INSERT INTO cli_tool_changes (at, tool, action, files, backup, key_id, model, base_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(at, input.tool, input.action, JSON.stringify(input.files), input.backup ?? null, input.keyId ?? null, input.model ?? null, input.baseUrl ?? null);
    this.db.prepare('DELETE FROM cli_tool_changes WHERE id <= ?').run(Number(lastInsertRowid) - KEEP);
    return toChange(this.db.prepare('SELECT * FROM cli_tool_changes WHERE id = ?').get(lastInsertRowid) as Row);
  }

  /** Newest first; `before` is the id of the last change of the previous page. */
  list(q: { tool?: string; limit: number; before?: number }): { changes: CliToolChange[]; nextCursor: string | null } {
    const rows = this.db
      .prepare(`SELECT * FROM cli_tool_changes WHERE id < ? ${q.tool ? 'AND tool = ?' : ''} ORDER BY id DESC LIMIT ?`)
      .all(...[q.before ?? Number.MAX_SAFE_INTEGER, ...(q.tool ? [q.tool] : []), q.limit + 1]) as Row[];
    const more = rows.length > q.limit;
    const shown = more ? rows.slice(0, q.limit) : rows;
    return { changes: shown.map(toChange), nextCursor: more ? String(shown[shown.length - 1]!.id) : null };
  }
}
