import type { SqlDriver } from '../store/driver.js';
import { valuesList } from '../store/driver.js';
import type { SqliteDriver } from '../store/sqlite-driver.js';
import type { KeyRepository, KeyUse } from './port.js';
import type { KeyRecord, TokenLimit, UsdBudget } from './store.js';

interface Row {
  id: string;
  name: string;
  key_hash: string;
  masked_key: string;
  scopes: string;
  is_active: number;
  created_at: string;
  last_used_at: string | null;
  daily_request_limit: number | null;
  token_limits: string;
  budget: string | null;
}

const LOAD = 'SELECT id, name, key_hash, masked_key, scopes, is_active, created_at, last_used_at, daily_request_limit, token_limits, budget FROM api_keys';

/** Rows per last-use statement (well under both dialects' placeholder limits). */
const TOUCH_CHUNK = 500;

function fromRow(row: Row): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    maskedKey: row.masked_key,
    scopes: JSON.parse(row.scopes) as string[],
    isActive: row.is_active === 1,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    dailyRequestLimit: row.daily_request_limit,
    tokenLimits: JSON.parse(row.token_limits) as TokenLimit[],
    budget: row.budget ? (JSON.parse(row.budget) as UsdBudget) : null,
    keyHash: Buffer.from(row.key_hash, 'hex'),
  };
}

/** Loads every key at boot, synchronously (the embedded file; the daemon's boot is synchronous). */
export function loadKeysSync(driver: SqliteDriver): KeyRecord[] {
  return driver.querySync<Row>(LOAD).map(fromRow);
}

/** The keys port over the driver seam: one SQL text for SQLite and PostgreSQL (table api_keys). */
export class SqlKeyRepository implements KeyRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<KeyRecord[]> {
    return (await this.driver.query<Row>(LOAD)).map(fromRow);
  }

  async insert(rec: KeyRecord): Promise<void> {
    await this.driver.run(
      'INSERT INTO api_keys (id, name, key_hash, masked_key, scopes, is_active, created_at, updated_at, daily_request_limit, token_limits, budget) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        rec.id,
        rec.name,
        rec.keyHash.toString('hex'),
        rec.maskedKey,
        JSON.stringify(rec.scopes),
        rec.isActive ? 1 : 0,
        rec.createdAt,
        rec.createdAt,
        rec.dailyRequestLimit,
        JSON.stringify(rec.tokenLimits),
        rec.budget ? JSON.stringify(rec.budget) : null,
      ],
    );
  }

  async update(rec: KeyRecord, updatedAt: string): Promise<boolean> {
    const { changes } = await this.driver.run(
      'UPDATE api_keys SET name = ?, scopes = ?, is_active = ?, daily_request_limit = ?, token_limits = ?, budget = ?, updated_at = ? WHERE id = ?',
      [rec.name, JSON.stringify(rec.scopes), rec.isActive ? 1 : 0, rec.dailyRequestLimit, JSON.stringify(rec.tokenLimits), rec.budget ? JSON.stringify(rec.budget) : null, updatedAt, rec.id],
    );
    return changes > 0;
  }

  async remove(id: string): Promise<boolean> {
    const { changes } = await this.driver.run('DELETE FROM api_keys WHERE id = ?', [id]);
    return changes > 0;
  }

  /**
   * One statement per chunk (atomic on its own, so no transaction to hold open): on SQLite it runs when
   * called, which lets a closing daemon flush without waiting.
   */
  async touchMany(uses: readonly KeyUse[]): Promise<void> {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < uses.length; i += TOUCH_CHUNK) {
      const chunk = uses.slice(i, i + TOUCH_CHUNK);
      writes.push(
        this.driver.run(
          `WITH v(id, t) AS (VALUES ${valuesList(chunk.length, 2)})
           UPDATE api_keys SET last_used_at = v.t FROM v
           WHERE api_keys.id = v.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.t)`,
          chunk.flatMap((u) => [u.id, u.lastUsedAt]),
        ),
      );
    }
    await Promise.all(writes);
  }
}
