import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { settledLoad, type ProviderRepository } from './port.js';
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

/** The change-feed topic of provider node writes. */
export const NODES_TOPIC = 'provider-nodes';

/** A prefix another node took first (the routes check names before writing: this is the safety net). */
function prefixTaken(prefix: string): RouterError {
  return new RouterError(409, `Prefix '${prefix}' is already a provider node's prefix.`, { code: 'prefix_taken', extra: { param: 'prefix' } });
}

/**
 * Custom provider nodes, cached in memory (the provider directory reads them). Writes go to the
 * `ProviderRepository` port first and reach the snapshot once stored; each publishes `NODES_TOPIC`, and a
 * notice from another node reloads the snapshot and tells the listeners as a local write does.
 */
export class NodeStore {
  private nodes: readonly ProviderNode[];
  private readonly listeners: Array<() => void> = [];
  /** Local writes so far: a reload that overlapped one loads again (it may have read the row before it). */
  private writes = 0;

  constructor(
    private readonly repo: ProviderRepository,
    initial: readonly ProviderNode[],
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
    onError: (error: unknown) => void = () => {},
  ) {
    this.nodes = initial;
    this.changes.subscribe(NODES_TOPIC, () => this.reload().catch(onError));
  }

  static async create(repo: ProviderRepository, changes?: ChangeFeed, onError?: (error: unknown) => void): Promise<NodeStore> {
    return new NodeStore(repo, await repo.loadNodes(), changes, onError);
  }

  /** Replaces the snapshot with what storage holds now (another node wrote) and tells the listeners. */
  async reload(): Promise<void> {
    const rows = await settledLoad(() => this.writes, () => this.repo.loadNodes());
    this.set(rows);
  }

  private set(nodes: readonly ProviderNode[]): void {
    this.nodes = nodes;
    for (const fn of this.listeners) fn();
  }

  /** Called after every change, whoever made it (a route, a sync, an import, another node): the provider directory rebuilds. */
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

  async create(input: NodeInput): Promise<ProviderNode> {
    const now = new Date().toISOString();
    const node: ProviderNode = {
      id: randomUUID(),
      name: input.name,
      prefix: input.prefix,
      type: input.type,
      baseUrl: normalizeNodeBaseUrl(input.type, input.baseUrl),
      apiType: input.apiType ?? 'chat',
      completions: input.completions !== false,
      rerankFormat: input.rerankFormat === 'tei' ? 'tei' : 'cohere',
      tokenLimitField: input.tokenLimitField ?? 'auto',
      customHeaders: input.customHeaders ?? {},
      createdAt: now,
      updatedAt: now,
    };
    this.writes++;
    if ((await this.repo.insertNode(node)) === 'prefix-taken') throw prefixTaken(node.prefix);
    this.changes.publish(NODES_TOPIC);
    this.set([...this.nodes.filter((n) => n.id !== node.id), node]);
    return node;
  }

  async update(id: string, patch: Partial<NodeInput>): Promise<ProviderNode | undefined> {
    const cur = this.get(id);
    if (!cur) return undefined;
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<NodeInput>;
    const next: ProviderNode = { ...cur, ...defined, updatedAt: new Date().toISOString() };
    next.baseUrl = normalizeNodeBaseUrl(next.type, next.baseUrl);
    next.rerankFormat = next.rerankFormat === 'tei' ? 'tei' : 'cohere';
    next.tokenLimitField ??= 'auto';
    this.writes++;
    const result = await this.repo.updateNode(next);
    if (result === 'prefix-taken') throw prefixTaken(next.prefix);
    if (result === 'missing') return undefined;
    this.changes.publish(NODES_TOPIC);
    this.set(this.nodes.map((n) => (n.id === id ? next : n)));
    return next;
  }

  async remove(id: string): Promise<boolean> {
    this.writes++;
    const done = await this.repo.removeNode(id);
    if (done) this.changes.publish(NODES_TOPIC);
    if (this.get(id)) this.set(this.nodes.filter((n) => n.id !== id));
    return done;
  }
}
