import type { SqlDriver } from '../store/driver.js';
import type { GuardrailRepository, StoredGuardrails } from './port.js';

/** The guardrails port over the driver seam (tables guardrail_config, one row, and guardrail_key_overrides). */
export class SqlGuardrailRepository implements GuardrailRepository {
  constructor(private readonly driver: SqlDriver) {}

  async load(): Promise<StoredGuardrails> {
    const [row] = await this.driver.query<{ config: string }>('SELECT config FROM guardrail_config WHERE id = 1');
    const rows = await this.driver.query<{ api_key_id: string; config: string }>('SELECT api_key_id, config FROM guardrail_key_overrides');
    return {
      config: row ? (JSON.parse(row.config) as unknown) : undefined,
      overrides: rows.map((r) => ({ keyId: r.api_key_id, config: JSON.parse(r.config) as unknown })),
    };
  }

  async saveConfig(config: unknown, updatedAt: string): Promise<void> {
    await this.driver.run(
      'INSERT INTO guardrail_config (id, config, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at',
      [JSON.stringify(config), updatedAt],
    );
  }

  async saveOverride(keyId: string, config: unknown, updatedAt: string): Promise<void> {
    await this.driver.run(
      'INSERT INTO guardrail_key_overrides (api_key_id, config, updated_at) VALUES (?, ?, ?) ON CONFLICT (api_key_id) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at',
      [keyId, JSON.stringify(config), updatedAt],
    );
  }

  async deleteOverride(keyId: string): Promise<void> {
    await this.driver.run('DELETE FROM guardrail_key_overrides WHERE api_key_id = ?', [keyId]);
  }
}
