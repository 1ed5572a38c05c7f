import type { CliToolChange, CliToolChangeInput } from '../../shared/observability.js';
import type { SqlDriver } from '../store/driver.js';
import type { CliToolLogRepository, CliToolQuery } from './cli-tool-port.js';

interface Row {
  id: number | string;
  at: number | string;
  tool: string;
  action: string;
  files: string;
  backup: string | null;
  key_id: string | null;
  model: string | null;
  base_url: string | null;
}

const COLUMNS = 'id, at, tool, action, files, backup, key_id, model, base_url';

// BIGINT columns come back from PostgreSQL as strings: numbers either way.
const toChange = (r: Row): CliToolChange => ({
  id: Number(r.id),
  at: new Date(Number(r.at)).toISOString(),
  tool: r.tool,
  action: r.action as CliToolChange['action'],
  files: JSON.parse(r.files) as CliToolChange['files'],
  backup: r.backup,
  keyId: r.key_id,
  model: r.model,
  baseUrl: r.base_url,
});

/** The CLI-tool change log over the driver seam (table cli_tool_changes; ids ascend with insertion). */
export class SqlCliToolLogRepository implements CliToolLogRepository {
  constructor(private readonly driver: SqlDriver) {}

  async record(at: number, input: CliToolChangeInput, keep: number): Promise<CliToolChange> {
    const [row] = await this.driver.query<Row>(
      `INSERT INTO cli_tool_changes (at, tool, action, files, backup, key_id, model, base_url) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
      [at, input.tool, input.action, JSON.stringify(input.files), input.backup ?? null, input.keyId ?? null, input.model ?? null, input.baseUrl ?? null],
    );
    if (!row) throw new Error('cli_tool_changes insert returned no row');
    await this.driver.run('DELETE FROM cli_tool_changes WHERE id <= ?', [Number(row.id) - keep]);
    return toChange(row);
  }

  async list(q: CliToolQuery): Promise<CliToolChange[]> {
    const rows = await this.driver.query<Row>(
      `SELECT ${COLUMNS} FROM cli_tool_changes WHERE id < ? ${q.tool ? 'AND tool = ?' : ''} ORDER BY id DESC LIMIT ?`,
      [q.before ?? Number.MAX_SAFE_INTEGER, ...(q.tool ? [q.tool] : []), q.limit],
    );
    return rows.map(toChange);
  }
}
