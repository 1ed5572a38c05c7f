import type { ServerResponse } from 'node:http';
import { bodyLimitFor } from '../http/app.js';
import { readJsonBody } from '../http/body.js';
import { badRequest, RouterError } from '../http/errors.js';
import { route, type RouteContext, type RouteDef } from '../http/routes.js';
import type { WireFormat } from '../translate/ir.js';
import { anthropicModelList, geminiModelList, openAiModelList } from './catalog.js';
import { RELAY_PATH, runChat } from './chat.js';
import { sanitizeHeaderValue } from '../usage/sanitize.js';
import { countTokens } from './count-tokens.js';
import { runEmbeddings } from './embeddings.js';
import { runRerank } from './rerank/run.js';

/** Reads the client body: a JSON object, size-limited by the client-route limit. */
async function readObject(ctx: RouteContext, def: RouteDef): Promise<Record<string, unknown>> {
  const raw = await readJsonBody(ctx.event, bodyLimitFor(def, ctx.services));
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Request body must be a JSON object.');
  // Kept for the traffic capture of a request refused later (http/app.ts).
  ctx.event.context.clientBody = raw;
  return raw as Record<string, unknown>;
}

/** A chat-like endpoint in one client format: model and stream flag read from the body. */
/** The client's Node response, when served by node:http (absent for in-process `app.request` calls). */
function nodeResponse(ctx: RouteContext): ServerResponse | undefined {
  return ctx.event.req.runtime?.node?.res as ServerResponse | undefined;
}

function chatRoute(path: string, format: WireFormat, summary: string): RouteDef {
  const def: RouteDef = route({
    method: 'POST',
    path,
    tier: 'client',
    tag: 'proxy',
    summary,
    rawBody: true,
    errorFormat: format,
    handler: async (ctx) => {
      const raw = await readObject(ctx, def);
      if (path === RELAY_PATH) {
        // Spec, relay route: client-supplied headers are cleaned and capped before they are logged.
        const h = ctx.event.req.headers;
        ctx.services.log.info('relay request', {
          forwardedFor: sanitizeHeaderValue(h.get('x-forwarded-for')),
          userAgent: sanitizeHeaderValue(h.get('user-agent')),
        });
      }
      if (raw.stream !== undefined && typeof raw.stream !== 'boolean') throw badRequest("'stream' must be a boolean.", 'stream');
      return runChat(ctx, { clientFormat: format, raw, model: raw.model as string, stream: raw.stream === true, endpoint: path, sink: nodeResponse(ctx) });
    },
  });
  return def;
}

const GEMINI_ACTION_RE = /^(.+):(generateContent|streamGenerateContent|countTokens)$/;

/** Gemini-native generateContent / streamGenerateContent / countTokens for `<provider>/<model>:<action>`. */
function geminiRoute(path: string, summary: string): RouteDef {
  const def: RouteDef = route({
    method: 'POST',
    path,
    tier: 'client',
    tag: 'proxy',
    summary,
    rawBody: true,
    errorFormat: 'gemini',
    handler: async (ctx) => {
      const m = GEMINI_ACTION_RE.exec(decodeURIComponent(ctx.params.target ?? '').replace(/^models\//, ''));
      if (!m) throw new RouterError(404, 'Unknown Gemini action: use models/<model>:generateContent or :streamGenerateContent.');
      const [, model, action] = m as unknown as [string, string, string];
      const raw = await readObject(ctx, def);
      if (action === 'countTokens') return countTokens(ctx, 'gemini', '/v1beta/models:countTokens', { ...raw, model });
      return runChat(ctx, { clientFormat: 'gemini', raw, model, stream: action === 'streamGenerateContent', endpoint: '/v1beta/models', sink: nodeResponse(ctx) });
    },
  });
  return def;
}

const countTokensRoute: RouteDef = route({
  method: 'POST',
  path: '/v1/messages/count_tokens',
  tier: 'client',
  tag: 'proxy',
  summary: 'Anthropic token counting (native for Anthropic targets, estimated with a tokenizer otherwise)',
  rawBody: true,
  errorFormat: 'anthropic',
  handler: async (ctx) => countTokens(ctx, 'anthropic', '/v1/messages/count_tokens', await readObject(ctx, countTokensRoute)),
});

const embeddingsRoute: RouteDef = route({
  method: 'POST',
  path: '/v1/embeddings',
  tier: 'client',
  tag: 'proxy',
  summary: 'Embeddings (OpenAI-compatible); upstream content-encoding headers are stripped',
  rawBody: true,
  handler: async (ctx) => runEmbeddings(ctx, await readObject(ctx, embeddingsRoute)),
});

const rerankRoute: RouteDef = route({
  method: 'POST',
  path: '/v1/rerank',
  tier: 'client',
  tag: 'proxy',
  summary: 'Rerank (Cohere/Jina shape) to Cohere, Jina, Voyage, Together and compatible nodes (vLLM, TEI); docs/rerank.md',
  rawBody: true,
  handler: async (ctx) => runRerank(ctx, await readObject(ctx, rerankRoute)),
});

const rerankV2Route: RouteDef = route({
  method: 'POST',
  path: '/v2/rerank',
  tier: 'client',
  tag: 'proxy',
  summary: "Rerank in Cohere's v2 shape (the cohere-ai SDK's CohereClientV2 unmodified), to any rerank model; docs/rerank.md",
  rawBody: true,
  handler: async (ctx) => runRerank(ctx, await readObject(ctx, rerankV2Route), 'cohere-v2'),
});

/** Every proxy route: client tier (an API key). */
export const proxyRoutes: RouteDef[] = [
  chatRoute('/v1/chat/completions', 'openai-chat', 'Chat Completions (OpenAI-compatible); streaming over SSE'),
  chatRoute('/v1/messages', 'anthropic', 'Messages (Anthropic-compatible); streaming over SSE'),
  chatRoute('/v1/responses', 'openai-responses', 'Responses (OpenAI-compatible); streaming over SSE'),
  chatRoute('/v1/completions', 'openai-completions', 'Legacy text completions; replies in the text_completion shape'),
  chatRoute(RELAY_PATH, 'openai-chat', 'Relay variant of Chat Completions'),
  countTokensRoute,
  embeddingsRoute,
  rerankRoute,
  rerankV2Route,
  geminiRoute('/v1beta/models/**:target', 'Gemini-native generateContent / streamGenerateContent; {target} is `<provider>/<model>:<action>`'),
  // The AI SDK's Google provider sends ids that contain a slash without the `models/` segment.
  geminiRoute('/v1beta/**:target', 'Gemini-native actions addressed without `models/` (`/v1beta/<provider>/<model>:<action>`)'),
  route({
    method: 'GET',
    path: '/v1/models',
    tier: 'client',
    tag: 'proxy',
    summary: 'Model catalog (OpenAI shape; Anthropic shape when the anthropic-version header is sent)',
    handler: ({ services, event }) =>
      event.req.headers.get('anthropic-version') ? anthropicModelList(services) : openAiModelList(services),
  }),
  route({
    method: 'GET',
    path: '/v1beta/models',
    tier: 'client',
    tag: 'proxy',
    summary: 'Catalog of providers with an active connection, in the Gemini shape',
    handler: ({ services }) => geminiModelList(services),
  }),
];
