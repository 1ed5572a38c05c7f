import { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import { proxyUrlProblem } from '../net/outbound-proxy.js';
import { maskProxyUrl } from '../net/settings.js';
import { isoTime, NO_CONTENT } from '../http/replies.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { publicConnection, type Connection } from './connections.js';
import { fetchUpstreamModels } from './sync.js';
import { testConnection } from './health.js';
import { modelCatalog } from './available.js';
import { connectionModelsReply, connectionTestReply, modelsReply, nodeReply, syncModelsReply } from './replies.js';
import type { AuthKind, ProviderDef } from './types.js';

const secret = z.string().min(1).max(8192);
const httpUrl = z
  .string()
  .max(2000)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');
const specificData = z
  .record(z.string().max(100), z.unknown())
  .refine((d) => Object.keys(d).length <= 50, 'at most 50 keys')
  .refine((d) => d.baseUrl === undefined || httpUrl.safeParse(d.baseUrl).success, 'baseUrl must be an http(s) URL')
  .refine(
    (d) => d.proxy === undefined || d.proxy === null || d.proxy === 'direct' || (typeof d.proxy === 'string' && proxyUrlProblem(d.proxy) === null),
    'proxy must be an http://, https:// or socks5:// URL, "direct" or null',
  );
const expiresAt = z.union([z.string().datetime({ offset: true }), z.number().int().positive()]);

const connectionFields = {
  name: z.string().trim().min(1).max(100),
  apiKey: secret,
  accessToken: secret,
  refreshToken: secret,
  cookie: secret,
  expiresAt: expiresAt.nullable(),
  priority: z.number().int().min(0).max(1_000_000),
  providerSpecificData: specificData,
  isActive: z.boolean(),
};
const createConnection = z.object({ provider: z.string().min(1).max(200), ...connectionFields }).partial({
  name: true, apiKey: true, accessToken: true, refreshToken: true, cookie: true, expiresAt: true, priority: true, providerSpecificData: true, isActive: true,
}).strict();
const updateConnection = z.object(connectionFields).partial().strict();

/** Headers the router sets itself (body framing, connection handling): a node may not override them. */
const RESERVED_HEADERS = new Set([
  'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer',
  'proxy-connection',
]);

const nodeFields = {
  name: z.string().trim().min(1).max(100),
  prefix: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,49}$/, 'lowercase letters, digits, dot, dash, underscore; at most 50'),
  type: z.enum(['openai-compatible', 'anthropic-compatible']),
  baseUrl: httpUrl,
  apiType: z.enum(['chat', 'responses']),
  completions: z.boolean(),
  rerankFormat: z.enum(['cohere', 'tei']),
  tokenLimitField: z.enum(['auto', 'max_tokens', 'max_completion_tokens']),
  customHeaders: z
    .record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(2000))
    .refine((h) => Object.keys(h).length <= 30, 'at most 30 headers')
    .refine((h) => Object.keys(h).every((k) => !RESERVED_HEADERS.has(k.toLowerCase())), 'framing and hop-by-hop headers cannot be set'),
};
/** A new node as the route (and a sync) accepts it. */
export const createNode = z.object(nodeFields).partial({ apiType: true, completions: true, rerankFormat: true, tokenLimitField: true, customHeaders: true }).strict();
const updateNode = z.object(nodeFields).partial().strict();

/** expiresAt as one canonical UTC ISO string: epoch seconds (or milliseconds) and offset timestamps alike. */
const toIso = (v: string | number | null | undefined) =>
  v === undefined ? undefined : v === null ? null : new Date(typeof v === 'number' && v < 1e12 ? v * 1000 : v).toISOString();

/** Which auth kind a set of credential fields means, checked against what the provider accepts. */
function authKindFor(def: ProviderDef, body: { apiKey?: string; accessToken?: string; cookie?: string }): AuthKind {
  const kind: AuthKind = body.apiKey ? 'api-key' : body.accessToken ? 'oauth' : body.cookie ? 'web-session' : 'none';
  if (!def.authKinds.includes(kind)) {
    const wanted = def.authKinds.map((k) => ({ 'api-key': 'apiKey', oauth: 'accessToken', 'web-session': 'cookie', none: 'nothing' })[k]).join(' or ');
    throw badRequest(`Provider '${def.id}' needs ${wanted}.`, kind === 'none' ? 'apiKey' : 'provider');
  }
  return kind;
}

function providerOf(services: Services, key: string): ProviderDef {
  const def = services.providers.provider(key);
  if (!def) throw badRequest(`Unknown provider '${key}' (GET /api/providers/catalog lists them).`, 'provider');
  return def;
}

function connectionOr404(services: Services, id: string | undefined): Connection {
  const c = id ? services.connections.get(id) : undefined;
  if (!c) throw new RouterError(404, 'Connection not found.');
  return c;
}

function refreshDirectory(services: Services): void {
  services.providers.refreshNodes();
}

/** Provider catalog, connections (accounts) and provider nodes. */
/** A connection as the replies show it: secrets masked (a secret not set is absent). */
export const connectionReply = z.object({
  id: z.string(),
  /** As people read it: a provider node's prefix, a built-in provider's id. */
  provider: z.string(),
  /** The stored provider id (a node's UUID). */
  providerId: z.string(),
  name: z.string(),
  authKind: z.enum(['api-key', 'oauth', 'web-session', 'none']),
  apiKey: z.string().optional(),
  accessToken: z.string().optional(),
  refreshToken: z.string().optional(),
  cookie: z.string().optional(),
  expiresAt: isoTime.nullable(),
  priority: z.number(),
  providerSpecificData: z.record(z.string(), z.unknown()),
  isActive: z.boolean(),
  testStatus: z.string().nullable(),
  lastError: z.string().nullable(),
  lastTestedAt: isoTime.nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});

const catalogReply = z.object({
  providers: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      kind: z.string(),
      format: z.string(),
      authKinds: z.array(z.string()),
      /** null when the provider has no address of its own (web-session: each connection sets one). */
      baseUrl: z.string().nullable(),
      aliases: z.array(z.string()),
      supportsTools: z.boolean(),
    }),
  ),
});

export const providerRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/models',
    tier: 'management',
    tag: 'providers',
    summary:
      'The model catalog for admin tools: combos, providers with an active connection, local servers that answer a short probe; ?all=true adds every other model, marked unavailable',
    query: z.object({ all: z.enum(['true', 'false']).optional() }).strict(),
    reply: modelsReply,
    handler: async ({ services, query }) => ({ models: await modelCatalog(services, query.all === 'true') }),
  }),
  route({
    method: 'GET',
    path: '/api/providers/catalog',
    tier: 'management',
    tag: 'providers',
    summary: 'Every provider with its kind, wire format and auth kinds',
    reply: catalogReply,
    handler: ({ services }) => ({
      providers: services.providers.all().map((p) => ({
        id: services.providers.publicId(p),
        name: p.name,
        kind: services.nodes.get(p.id) ? 'node' : p.kind,
        format: p.format,
        authKinds: p.authKinds,
        // web-session chats have no address of their own (each connection sets one): no placeholder shown.
        baseUrl: p.kind === 'web-session' ? null : p.baseUrl,
        aliases: p.aliases ?? [],
        supportsTools: p.supportsTools !== false,
      })),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/providers',
    tier: 'management',
    tag: 'providers',
    summary: 'Connections (secrets masked)',
    reply: z.object({ connections: z.array(connectionReply) }),
    handler: ({ services }) => ({ connections: services.connections.list().map((c) => publicConnection(c, (id) => services.providers.label(id))) }),
  }),
  route({
    method: 'POST',
    path: '/api/providers',
    tier: 'management',
    tag: 'providers',
    summary: 'Add a connection to a provider (built-in id, node id or node prefix)',
    body: createConnection,
    status: 201,
    reply: connectionReply,
    handler: async ({ services, body }) => {
      const def = providerOf(services, body.provider);
      const authKind = authKindFor(def, body);
      const c = await services.connections.create({
        provider: def.id,
        name: body.name ?? def.name,
        authKind,
        credential: { apiKey: body.apiKey, accessToken: body.accessToken, refreshToken: body.refreshToken, cookie: body.cookie },
        expiresAt: toIso(body.expiresAt),
        priority: body.priority,
        providerSpecificData: body.providerSpecificData,
        isActive: body.isActive,
      });
      return json(201, publicConnection(c, (id) => services.providers.label(id)));
    },
  }),
  route({
    method: 'GET',
    path: '/api/providers/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'One connection (secrets masked)',
    reply: connectionReply,
    handler: ({ services, params }) => publicConnection(connectionOr404(services, params.id), (id) => services.providers.label(id)),
  }),
  route({
    method: 'PUT',
    path: '/api/providers/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'Update a connection; given secrets replace the stored ones',
    body: updateConnection,
    reply: connectionReply,
    handler: async ({ services, params, body }) => {
      const cur = connectionOr404(services, params.id);
      const { apiKey, accessToken, refreshToken, cookie, expiresAt: exp, ...rest } = body;
      const credential = Object.fromEntries(Object.entries({ apiKey, accessToken, refreshToken, cookie }).filter(([, v]) => v !== undefined));
      // A new primary credential must be one the provider accepts (as on create), and sets the auth kind.
      const def = services.providers.provider(cur.provider);
      const authKind = def && (apiKey || accessToken || cookie) ? authKindFor(def, { apiKey, accessToken, cookie }) : undefined;
      // A proxy URL sent back as shown (password masked) keeps the stored one.
      const shownProxy = rest.providerSpecificData?.proxy;
      if (typeof shownProxy === 'string' && typeof cur.providerSpecificData.proxy === 'string' && shownProxy !== cur.providerSpecificData.proxy && shownProxy === maskProxyUrl(cur.providerSpecificData.proxy)) {
        rest.providerSpecificData = { ...rest.providerSpecificData, proxy: cur.providerSpecificData.proxy };
      }
      const next = await services.connections.update(cur.id, {
        ...rest,
        ...(authKind ? { authKind } : {}),
        ...(Object.keys(credential).length ? { credential } : {}),
        ...(exp !== undefined ? { expiresAt: toIso(exp) } : {}),
        // Re-activating a connection clears an "expired" verdict.
        ...(rest.isActive === true ? { testStatus: null } : {}),
      });
      if (!next) throw new RouterError(404, 'Connection not found.');
      return publicConnection(next, (id) => services.providers.label(id));
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/providers/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'Remove a connection',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      connectionOr404(services, params.id);
      await services.connections.remove(params.id!);
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/:id/test',
    tier: 'management',
    tag: 'providers',
    summary: 'Check a connection against its upstream (lists its models)',
    reply: connectionTestReply,
    handler: async ({ services, params }) => testConnection(services, connectionOr404(services, params.id)),
  }),
  route({
    method: 'GET',
    path: '/api/providers/:id/models',
    tier: 'management',
    tag: 'providers',
    summary: "Models of the connection's provider (synced when synced, else the static list)",
    reply: connectionModelsReply,
    handler: ({ services, params }) => {
      const def = providerOf(services, connectionOr404(services, params.id).provider);
      const synced = services.syncedModels.get(def.id);
      return { provider: services.providers.publicId(def), source: synced ? 'synced' : 'static', models: services.providers.models(def) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/:id/sync-models',
    tier: 'management',
    tag: 'providers',
    summary: "Fetch the provider's model list upstream; it replaces the static list in the catalog",
    reply: syncModelsReply,
    handler: async ({ services, params }) => {
      const c = connectionOr404(services, params.id);
      const def = providerOf(services, c.provider);
      const models = await fetchUpstreamModels(def, c, services.providers.connectionTarget(def, c)).catch((err: Error) => {
        throw new RouterError(502, `Model sync failed: ${err.message}`);
      });
      await services.syncedModels.replace(def.id, models);
      const stored = services.syncedModels.get(def.id) ?? [];
      return { provider: services.providers.publicId(def), count: stored.length, models: stored };
    },
  }),
  route({
    method: 'GET',
    path: '/api/provider-nodes',
    tier: 'management',
    tag: 'providers',
    summary: 'Custom provider nodes',
    reply: z.object({ nodes: z.array(nodeReply) }),
    handler: ({ services }) => ({ nodes: services.nodes.list() }),
  }),
  route({
    method: 'POST',
    path: '/api/provider-nodes',
    tier: 'management',
    tag: 'providers',
    summary: 'Add a custom OpenAI- or Anthropic-compatible endpoint; its models are <prefix>/<model>',
    body: createNode,
    status: 201,
    reply: nodeReply,
    handler: async ({ services, body }) => {
      if (services.providers.provider(body.prefix)) throw badRequest(`Prefix '${body.prefix}' is already a provider id, alias or prefix.`, 'prefix');
      const node = await services.nodes.create(body);
      refreshDirectory(services);
      return json(201, node);
    },
  }),
  route({
    method: 'GET',
    path: '/api/provider-nodes/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'One provider node',
    reply: nodeReply,
    handler: ({ services, params }) => {
      const node = services.nodes.get(params.id ?? '');
      if (!node) throw new RouterError(404, 'Provider node not found.');
      return node;
    },
  }),
  route({
    method: 'PUT',
    path: '/api/provider-nodes/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'Update a provider node',
    body: updateNode,
    reply: nodeReply,
    handler: async ({ services, params, body }) => {
      const cur = services.nodes.get(params.id ?? '');
      if (!cur) throw new RouterError(404, 'Provider node not found.');
      if (body.prefix && body.prefix !== cur.prefix && services.providers.provider(body.prefix)) {
        throw badRequest(`Prefix '${body.prefix}' is already a provider id, alias or prefix.`, 'prefix');
      }
      const node = await services.nodes.update(cur.id, body);
      if (!node) throw new RouterError(404, 'Provider node not found.');
      refreshDirectory(services);
      return node;
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/provider-nodes/:id',
    tier: 'management',
    tag: 'providers',
    summary: 'Remove a provider node and its connections (their stored credentials with them)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      const id = params.id ?? '';
      if (!(await services.nodes.remove(id))) throw new RouterError(404, 'Provider node not found.');
      // Connections are stored under the node id; left behind they would keep credentials nobody can use
      // or see routed, and would come back to life under a new node that reused the id.
      for (const c of services.connections.list().filter((x) => x.provider === id)) await services.connections.remove(c.id);
      refreshDirectory(services);
      return noContent();
    },
  }),
];
