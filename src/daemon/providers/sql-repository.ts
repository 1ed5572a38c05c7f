import type { ProviderNode } from '../../shared/records.js';
import { isUniqueViolation, valuesList, type SqlDriver, type SqlValue } from '../store/driver.js';
import type { ConnectionColumns, NodeWrite, ProviderRepository, StoredConnection, StoredModel } from './port.js';
import type { AuthKind } from './types.js';

interface NodeRow {
  id: string;
  name: string;
  prefix: string;
  type: ProviderNode['type'];
  base_url: string;
  api_type: ProviderNode['apiType'];
  completions: number;
  rerank_format: string;
  token_limit_field: string;
  custom_headers: string;
  created_at: string;
  updated_at: string;
}

const nodeFromRow = (r: NodeRow): ProviderNode => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  type: r.type,
  baseUrl: r.base_url,
  apiType: r.api_type,
  completions: r.completions !== 0,
  rerankFormat: r.rerank_format === 'tei' ? 'tei' : 'cohere',
  tokenLimitField: r.token_limit_field === 'max_tokens' || r.token_limit_field === 'max_completion_tokens' ? r.token_limit_field : 'auto',
  customHeaders: JSON.parse(r.custom_headers) as Record<string, string>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface ConnectionRow {
  id: string;
  provider: string;
  name: string;
  auth_kind: AuthKind;
  secrets_enc: string | null;
  expires_at: string | null;
  priority: number;
  provider_specific_data: string;
  is_active: number;
  test_status: string | null;
  last_error: string | null;
  last_tested_at: string | null;
  created_at: string;
  updated_at: string;
}

const connectionFromRow = (r: ConnectionRow): StoredConnection => ({
  id: r.id,
  provider: r.provider,
  name: r.name,
  authKind: r.auth_kind,
  secretsEnc: r.secrets_enc,
  expiresAt: r.expires_at,
  priority: r.priority,
  providerSpecificData: r.provider_specific_data,
  isActive: r.is_active === 1,
  testStatus: r.test_status,
  lastError: r.last_error,
  lastTestedAt: r.last_tested_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NODE_COLUMNS = 'id, name, prefix, type, base_url, api_type, completions, rerank_format, token_limit_field, custom_headers, created_at, updated_at';
const CONNECTION_COLUMNS =
  'id, provider, name, auth_kind, secrets_enc, expires_at, priority, provider_specific_data, is_active, test_status, last_error, last_tested_at, created_at, updated_at';

/** Synced models written per INSERT statement (4 parameters each, well under both dialects' limits). */
const MODELS_PER_INSERT = 200;

/** The column each updatable connection field is stored in. */
const CONNECTION_FIELDS: Record<keyof ConnectionColumns, string> = {
  name: 'name',
  authKind: 'auth_kind',
  secretsEnc: 'secrets_enc',
  expiresAt: 'expires_at',
  priority: 'priority',
  providerSpecificData: 'provider_specific_data',
  isActive: 'is_active',
  testStatus: 'test_status',
  lastError: 'last_error',
  lastTestedAt: 'last_tested_at',
  updatedAt: 'updated_at',
};

/** The providers port over the driver seam: one SQL text for SQLite and PostgreSQL. */
export class SqlProviderRepository implements ProviderRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadNodes(): Promise<ProviderNode[]> {
    return (await this.driver.query<NodeRow>(`SELECT ${NODE_COLUMNS} FROM provider_nodes ORDER BY created_at, id`)).map(nodeFromRow);
  }

  async insertNode(n: ProviderNode): Promise<Exclude<NodeWrite, 'missing'>> {
    try {
      await this.driver.run(`INSERT INTO provider_nodes (${NODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        n.id, n.name, n.prefix, n.type, n.baseUrl, n.apiType, n.completions, n.rerankFormat ?? 'cohere', n.tokenLimitField ?? 'auto',
        JSON.stringify(n.customHeaders), n.createdAt, n.updatedAt,
      ]);
      return 'stored';
    } catch (err) {
      if (isUniqueViolation(err)) return 'prefix-taken';
      throw err;
    }
  }

  async updateNode(n: ProviderNode): Promise<NodeWrite> {
    try {
      const { changes } = await this.driver.run(
        'UPDATE provider_nodes SET name = ?, prefix = ?, type = ?, base_url = ?, api_type = ?, completions = ?, rerank_format = ?, token_limit_field = ?, custom_headers = ?, updated_at = ? WHERE id = ?',
        [n.name, n.prefix, n.type, n.baseUrl, n.apiType, n.completions, n.rerankFormat ?? 'cohere', n.tokenLimitField ?? 'auto', JSON.stringify(n.customHeaders), n.updatedAt, n.id],
      );
      return changes > 0 ? 'stored' : 'missing';
    } catch (err) {
      if (isUniqueViolation(err)) return 'prefix-taken';
      throw err;
    }
  }

  async removeNode(id: string): Promise<boolean> {
    return (await this.driver.run('DELETE FROM provider_nodes WHERE id = ?', [id])).changes > 0;
  }

  async loadConnections(): Promise<StoredConnection[]> {
    return (await this.driver.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM provider_connections ORDER BY priority, created_at, id`)).map(connectionFromRow);
  }

  async getConnection(id: string): Promise<StoredConnection | undefined> {
    const [row] = await this.driver.query<ConnectionRow>(`SELECT ${CONNECTION_COLUMNS} FROM provider_connections WHERE id = ?`, [id]);
    return row && connectionFromRow(row);
  }

  async insertConnection(c: StoredConnection): Promise<void> {
    await this.driver.run(`INSERT INTO provider_connections (${CONNECTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      c.id, c.provider, c.name, c.authKind, c.secretsEnc, c.expiresAt, c.priority, c.providerSpecificData, c.isActive,
      c.testStatus, c.lastError, c.lastTestedAt, c.createdAt, c.updatedAt,
    ]);
  }

  async updateConnection(id: string, columns: ConnectionColumns): Promise<boolean> {
    const set: string[] = [];
    const params: SqlValue[] = [];
    for (const [field, value] of Object.entries(columns) as Array<[keyof ConnectionColumns, SqlValue | undefined]>) {
      if (value === undefined) continue;
      set.push(`${CONNECTION_FIELDS[field]} = ?`);
      params.push(value);
    }
    const { changes } = await this.driver.run(`UPDATE provider_connections SET ${set.join(', ')} WHERE id = ?`, [...params, id]);
    return changes > 0;
  }

  async removeConnection(id: string): Promise<boolean> {
    return (await this.driver.run('DELETE FROM provider_connections WHERE id = ?', [id])).changes > 0;
  }

  async sealedSample(): Promise<{ id: string; secretsEnc: string } | undefined> {
    const [row] = await this.driver.query<{ id: string; secrets_enc: string }>('SELECT id, secrets_enc FROM provider_connections WHERE secrets_enc IS NOT NULL ORDER BY id LIMIT 1');
    return row && { id: row.id, secretsEnc: row.secrets_enc };
  }

  async loadModels(): Promise<StoredModel[]> {
    const rows = await this.driver.query<{ provider: string; model_id: string; context_length: number | null }>(
      'SELECT provider, model_id, context_length FROM provider_models ORDER BY model_id',
    );
    return rows.map((r) => ({ provider: r.provider, modelId: r.model_id, contextLength: r.context_length }));
  }

  async replaceModels(provider: string, models: ReadonlyArray<{ id: string; contextLength: number | null }>, syncedAt: string): Promise<void> {
    // One entry per id, the last winning (as the old INSERT OR REPLACE), in multi-row statements.
    const unique = [...new Map(models.map((m) => [m.id, m])).values()];
    await this.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM provider_models WHERE provider = ?', [provider]);
      for (let i = 0; i < unique.length; i += MODELS_PER_INSERT) {
        const chunk = unique.slice(i, i + MODELS_PER_INSERT);
        await tx.run(
          `INSERT INTO provider_models (provider, model_id, context_length, synced_at) VALUES ${valuesList(chunk.length, 4)}`,
          chunk.flatMap((m) => [provider, m.id, m.contextLength, syncedAt]),
        );
      }
    });
  }
}
