import { z } from 'zod';
import { ERROR_REPLIES, otherMedia, replyMedia, streamedReplies } from './replies.js';
import type { RouteDef, Tier } from './routes.js';

/** h3 route syntax -> OpenAPI path template (`/api/keys/:id` -> `/api/keys/{id}`, `/**:model` -> `/{model}`). */
export function openApiPath(path: string): string {
  return path.replace(/\/\*\*:(\w+)/g, '/{$1}').replace(/\/\*\*$/, '/{path}').replace(/:(\w+)/g, '{$1}');
}

const SECURITY: Record<Tier, Array<Record<string, string[]>>> = {
  public: [],
  client: [{ BearerAuth: [] }, { AnthropicApiKey: [] }, { GoogleApiKey: [] }, { ManagementSessionAuth: [] }],
  management: [{ ManagementSessionAuth: [] }, { BearerAuth: [] }, { CliToken: [] }],
  local: [{ ManagementSessionAuth: [] }, { BearerAuth: [] }, { CliToken: [] }],
  spawn: [{ ManagementSessionAuth: [] }, { CliToken: [] }],
  copilot: [{ ManagementSessionAuth: [] }, { CliToken: [] }, { BearerAuth: [] }],
  metrics: [{ ManagementSessionAuth: [] }, { BearerAuth: [] }, { CliToken: [] }, {}],
};

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'code'],
      properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: 'string' } },
    },
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function queryParameters(schema: z.ZodType | undefined): unknown[] {
  if (!schema || !(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, s]) => ({
    name,
    in: 'query',
    required: !s.safeParse(undefined).success,
    schema: jsonSchema(s),
  }));
}

/** The success reply: the route's reply schema as JSON, or the media types of a reply that is not JSON. */
function success(def: RouteDef): Record<string, unknown> {
  if (!def.reply) return { description: 'Success' };
  const media = replyMedia.get(def.reply);
  if (media) {
    if (media.contentTypes.length === 0) return { description: media.description ?? 'No content' };
    return { description: 'Success', content: Object.fromEntries(media.contentTypes.map((t) => [t, {}])) };
  }
  const content: Record<string, unknown> = { 'application/json': { schema: jsonSchema(def.reply, 'output') } };
  for (const type of otherMedia.get(def.reply)?.contentTypes ?? []) content[type] = {};
  const streamed = streamedReplies.get(def.reply);
  if (streamed) content[streamed.contentType] = streamed.events ? { schema: { type: 'string', description: streamed.events } } : {};
  return { description: 'Success', content };
}

/** The error body's schema: the client format's for Anthropic's and Gemini's routes, else the standard one. */
function errorSchemaName(def: RouteDef): string {
  return def.errorFormat === 'anthropic' ? 'AnthropicError' : def.errorFormat === 'gemini' ? 'GeminiError' : 'Error';
}

function operation(def: RouteDef): Record<string, unknown> {
  const params = [...def.path.matchAll(/(?::|\*\*:)(\w+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const op: Record<string, unknown> = {
    summary: def.summary,
    tags: [def.tag],
    'x-router-tier': def.tier,
    security: SECURITY[def.tier],
    parameters: [...params, ...queryParameters(def.query)],
    responses: {
      [String(def.status ?? 200)]: success(def),
      default: { description: 'Error', content: { 'application/json': { schema: { $ref: `#/components/schemas/${errorSchemaName(def)}` } } } },
    },
  };
  if (def.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(def.body) } } };
  else if (def.bodyTypes) {
    op.requestBody = { required: true, content: Object.fromEntries(def.bodyTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])) };
  } else if (def.rawBody) op.requestBody = { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
  return op;
}

const OPENAPI_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Builds the OpenAPI 3.1.0 document from the route table, so the description cannot drift from the routes. */
export function buildOpenApi(routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    // OpenAPI 3.1 has no WebDAV methods (PROPFIND, MKCOL, MOVE): the vault documents them (docs/vault.md).
    if (!OPENAPI_METHODS.has(def.method)) continue;
    const p = openApiPath(def.path);
    (paths[p] ??= {})[def.method.toLowerCase()] = operation(def);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'router',
      version,
      description: 'Local-first model-routing proxy: proxy endpoints under /v1, management under /api.',
    },
    servers: [{ url: 'http://127.0.0.1:20128' }],
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA, AnthropicError: jsonSchema(ERROR_REPLIES.anthropic, 'output'), GeminiError: jsonSchema(ERROR_REPLIES.gemini, 'output') },
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key created with POST /api/keys.' },
        AnthropicApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        GoogleApiKey: { type: 'apiKey', in: 'header', name: 'x-goog-api-key' },
        ManagementSessionAuth: { type: 'apiKey', in: 'cookie', name: 'auth_token' },
        CliToken: { type: 'apiKey', in: 'header', name: 'X-Router-CLI-Token', description: 'Loopback callers only.' },
      },
    },
  };
}
