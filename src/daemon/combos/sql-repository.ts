import type { ComboAffinity, ComboModel, ComboRecord, MidStreamRecovery } from '../../shared/records.js';
import type { ComboStrategy } from '../routing/strategies.js';
import { isUniqueViolation, type SqlDriver } from '../store/driver.js';
import type { ComboRepository, ComboWrite } from './port.js';

interface Row {
  id: string;
  name: string;
  strategy: string;
  models: string;
  target_timeout_ms: number | null;
  affinity: string;
  hedge_after_ms: number | null;
  mid_stream_recovery: string | null;
  context_fit: number;
  created_at: string;
  updated_at: string;
}

const LOAD = 'SELECT id, name, strategy, models, target_timeout_ms, affinity, hedge_after_ms, mid_stream_recovery, context_fit, created_at, updated_at FROM combos';

function fromRow(row: Row): ComboRecord {
  return {
    id: row.id,
    name: row.name,
    strategy: row.strategy as ComboStrategy,
    models: JSON.parse(row.models) as ComboModel[],
    targetTimeoutMs: row.target_timeout_ms,
    affinity: row.affinity as ComboAffinity,
    hedgeAfterMs: row.hedge_after_ms,
    midStreamRecovery: row.mid_stream_recovery as MidStreamRecovery | null,
    contextFit: row.context_fit === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The combos port over the driver seam: one SQL text for SQLite and PostgreSQL (table combos). */
export class SqlComboRepository implements ComboRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<ComboRecord[]> {
    return (await this.driver.query<Row>(LOAD)).map(fromRow);
  }

  async insert(rec: ComboRecord): Promise<Exclude<ComboWrite, 'missing'>> {
    try {
      await this.driver.run(
        'INSERT INTO combos (id, name, strategy, models, target_timeout_ms, affinity, hedge_after_ms, mid_stream_recovery, context_fit, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [rec.id, rec.name, rec.strategy, JSON.stringify(rec.models), rec.targetTimeoutMs, rec.affinity, rec.hedgeAfterMs, rec.midStreamRecovery, rec.contextFit, rec.createdAt, rec.updatedAt],
      );
      return 'stored';
    } catch (err) {
      if (isUniqueViolation(err)) return 'name-taken';
      throw err;
    }
  }

  async update(rec: ComboRecord): Promise<ComboWrite> {
    try {
      const { changes } = await this.driver.run(
        'UPDATE combos SET name = ?, strategy = ?, models = ?, target_timeout_ms = ?, affinity = ?, hedge_after_ms = ?, mid_stream_recovery = ?, context_fit = ?, updated_at = ? WHERE id = ?',
        [rec.name, rec.strategy, JSON.stringify(rec.models), rec.targetTimeoutMs, rec.affinity, rec.hedgeAfterMs, rec.midStreamRecovery, rec.contextFit, rec.updatedAt, rec.id],
      );
      return changes > 0 ? 'stored' : 'missing';
    } catch (err) {
      if (isUniqueViolation(err)) return 'name-taken';
      throw err;
    }
  }

  async remove(id: string): Promise<boolean> {
    const { changes } = await this.driver.run('DELETE FROM combos WHERE id = ?', [id]);
    return changes > 0;
  }
}
