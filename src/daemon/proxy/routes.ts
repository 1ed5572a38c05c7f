import type { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import type { WireFormat } from '../translate/ir.js';
import { anthropicModelList, geminiModelList, openAiModelList } from './catalog.js';
import { RELAY_PATH, runChat } from './chat.js';
import { sanitizeHeaderValue } from '../usage/sanitize.js';
import { countTokens } from './count-tokens.js';
import { readObject } from './family-routes.js';
import { nodeSink } from './envelope.js';
import { anthropicTokenCount, chatReply, completionsReply, geminiModelListReply, geminiReply, messagesReply, modelListReply, responsesReply } from './replies.js';


function chatRoute(path: string, format: WireFormat, summary: string, reply: z.ZodType): RouteDef {
  const def: RouteDef = route({
    method: 'POST',
    path,
    tier: 'client',
    tag: 'proxy',
    summary,
    rawBody: true,
    errorFormat: format,
    reply,
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
      return runChat(ctx, { clientFormat: format, raw, model: raw.model as string, stream: raw.stream === true, endpoint: path, sink: nodeSink(ctx) });
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
    reply: geminiReply,
    handler: async (ctx) => {
      const m = GEMINI_ACTION_RE.exec(decodeURIComponent(ctx.params.target ?? '').replace(/^models\//, ''));
      if (!m) throw new RouterError(404, 'Unknown Gemini action: use models/<model>:generateContent or :streamGenerateContent.');
      const [, model, action] = m as unknown as [string, string, string];
      const raw = await readObject(ctx, def);
      if (action === 'countTokens') return countTokens(ctx, 'gemini', '/v1beta/models:countTokens', { ...raw, model });
      return runChat(ctx, { clientFormat: 'gemini', raw, model, stream: action === 'streamGenerateContent', endpoint: '/v1beta/models', sink: nodeSink(ctx) });
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
  reply: anthropicTokenCount,
  handler: async (ctx) => countTokens(ctx, 'anthropic', '/v1/messages/count_tokens', await readObject(ctx, countTokensRoute)),
});

/** The chat-like proxy routes and catalogs: client tier (an API key). The other endpoint families' routes: family-routes.ts. */
export const proxyRoutes: RouteDef[] = [
  chatRoute('/v1/chat/completions', 'openai-chat', 'Chat Completions (OpenAI-compatible); streaming over SSE', chatReply),
  chatRoute('/v1/messages', 'anthropic', 'Messages (Anthropic-compatible); streaming over SSE', messagesReply),
  chatRoute('/v1/responses', 'openai-responses', 'Responses (OpenAI-compatible); streaming over SSE', responsesReply),
  chatRoute('/v1/completions', 'openai-completions', 'Legacy text completions; replies in the text_completion shape', completionsReply),
  chatRoute(RELAY_PATH, 'openai-chat', 'Relay variant of Chat Completions', chatReply),
  countTokensRoute,
  geminiRoute('/v1beta/models/**:target', 'Gemini-native generateContent / streamGenerateContent; {target} is `<provider>/<model>:<action>`'),
  // The AI SDK's Google provider sends ids that contain a slash without the `models/` segment.
  geminiRoute('/v1beta/**:target', 'Gemini-native actions addressed without `models/` (`/v1beta/<provider>/<model>:<action>`)'),
  route({
    method: 'GET',
    path: '/v1/models',
    tier: 'client',
    tag: 'proxy',
    summary: 'Model catalog (OpenAI shape; Anthropic shape when the anthropic-version header is sent)',
    reply: modelListReply,
    handler: ({ services, event }) =>
      event.req.headers.get('anthropic-version') ? anthropicModelList(services) : openAiModelList(services),
  }),
  route({
    method: 'GET',
    path: '/v1beta/models',
    tier: 'client',
    tag: 'proxy',
    summary: 'Catalog of providers with an active connection, in the Gemini shape',
    reply: geminiModelListReply,
    handler: ({ services }) => geminiModelList(services),
  }),
];
