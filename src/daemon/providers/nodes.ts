import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import { bearer, type Credential, type ProviderDef } from './types.js';

import type { ProviderNode } from '../../shared/records.js';

export type { ProviderNode };

export type NodeInput = Omit<ProviderNode, 'id' | 'createdAt' | 'updatedAt' | 'apiType' | 'completions' | 'rerankFormat' | 'tokenLimitField' | 'customHeaders'> & {
  apiType?: ProviderNode['apiType'];
  completions?: boolean;
  rerankFormat?: ProviderNode['rerankFormat'];
  tokenLimitField?: ProviderNode['tokenLimitField'];
  customHeaders?: Record<string, string>;
};

interface Row {
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

const fromRow = (r: Row): ProviderNode => ({
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

/** A user-given Anthropic base URL may end in `/messages`; the convention is the version root. */
export function normalizeNodeBaseUrl(type: ProviderNode['type'], url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return type === 'anthropic-compatible' ? trimmed.replace(/\/messages$/, '') : trimmed;
}

/** The provider definition a node stands for. */
export function nodeProvider(node: ProviderNode): ProviderDef {
  const anthropic = node.type === 'anthropic-compatible';
  return {
    id: node.id,
    name: node.name,
    kind: 'cloud',
    format: anthropic ? 'anthropic' : node.apiType === 'responses' ? 'openai-responses' : 'openai-chat',
    baseUrl: node.baseUrl,
    authKinds: ['api-key', 'none'],
    authHeaders: anthropic ? (c: Credential): Record<string, string> => (c.apiKey ? { 'x-api-key': c.apiKey } : {}) : bearer,
    // Lower-cased names, so a custom header replaces a default of another spelling (Anthropic-Version) instead of
    // being sent twice, and the connection's credential header (set last, lower-case) is never shadowed.
    headers: {
      ...(anthropic ? { 'anthropic-version': '2023-06-01' } : {}),
      ...Object.fromEntries(Object.entries(node.customHeaders).map(([k, v]) => [k.toLowerCase(), v])),
    },
    endpoints: anthropic
      ? { models: true }
      : {
          embeddings: true,
          models: true,
          responses: node.apiType === 'responses',
          completions: node.completions,
          // An OpenAI-compatible node may serve any OpenAI media endpoint (vLLM, LocalAI, Speaches...); one
          // that does not answers 404, which the client sees as the node's own error.
          images: true,
          imageEdits: true,
          speech: true,
          transcriptions: true,
          translations: true,
          moderations: true,
        },
    // vLLM and Infinity serve `{base}/rerank` in the Cohere/Jina shape; Text Embeddings Inference its own.
    ...(anthropic ? {} : { rerank: { dialect: node.rerankFormat === 'tei' ? 'tei' : 'jina', path: 'rerank' } }),
    ...(anthropic ? {} : tokenLimit(node.tokenLimitField)),
    models: [],
  };
}

/** A Chat Completions node's output-limit field: the one its owner chose, else by model (`auto`). */
function tokenLimit(field: ProviderNode['tokenLimitField']): Pick<ProviderDef, 'chatTokenLimit' | 'chatTokenLimitByModel'> {
  return field === 'max_tokens' || field === 'max_completion_tokens' ? { chatTokenLimit: field } : { chatTokenLimitByModel: true };
}

/** Custom provider nodes, cached in memory. */
export class NodeStore {
  private nodes: ProviderNode[] = [];
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly db: Db) {
    this.reload();
  }

  private reload(): void {
    this.nodes = (this.db.prepare('SELECT * FROM provider_nodes ORDER BY created_at').all() as Row[]).map(fromRow);
    for (const fn of this.listeners) fn();
  }

  /** Called after every change, whoever made it (a route, a sync, an import): the provider directory rebuilds. */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  list(): readonly ProviderNode[] {
    return this.nodes;
  }

  get(id: string): ProviderNode | undefined {
    return this.nodes.find((n) => n.id === id);
  }

  byPrefix(prefix: string): ProviderNode | undefined {
    return this.nodes.find((n) => n.prefix === prefix);
  }

  create(input: NodeInput): ProviderNode {
    const now = new Date().toISOString();
    const id = randomUUID();
    this.db
      .prepare(
        'INSERT INTO provider_nodes (id, name, prefix, type, base_url, api_type, completions, rerank_format, token_limit_field, custom_headers, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        input.name,
        input.prefix,
        input.type,
        normalizeNodeBaseUrl(input.type, input.baseUrl),
        input.apiType ?? 'chat',
        input.completions === false ? 0 : 1,
        input.rerankFormat ?? 'cohere',
        input.tokenLimitField ?? 'auto',
        JSON.stringify(input.customHeaders ?? {}),
        now,
        now,
      );
    this.reload();
    return this.get(id)!;
  }

  update(id: string, patch: Partial<NodeInput>): ProviderNode | undefined {
    const cur = this.get(id);
    if (!cur) return undefined;
    const next = { ...cur, ...patch };
    next.baseUrl = normalizeNodeBaseUrl(next.type, next.baseUrl);
    this.db
      .prepare('UPDATE provider_nodes SET name = ?, prefix = ?, type = ?, base_url = ?, api_type = ?, completions = ?, rerank_format = ?, token_limit_field = ?, custom_headers = ?, updated_at = ? WHERE id = ?')
      .run(next.name, next.prefix, next.type, next.baseUrl, next.apiType, next.completions ? 1 : 0, next.rerankFormat ?? 'cohere', next.tokenLimitField ?? 'auto', JSON.stringify(next.customHeaders), new Date().toISOString(), id);
    this.reload();
    return this.get(id);
  }

  remove(id: string): boolean {
    const done = this.db.prepare('DELETE FROM provider_nodes WHERE id = ?').run(id).changes > 0;
    this.reload();
    return done;
  }
}
