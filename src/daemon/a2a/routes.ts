import { publicReason } from '../http/errors.js';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { readJsonBody } from '../http/body.js';
import { z } from 'zod';
import { orEventStream } from '../http/replies.js';
import { json, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { A2aService } from './service.js';

/** The A2A JSON-RPC endpoint (the agent card names it). */
export const A2A_PATH = '/api/a2a';

/**
 * The A2A service, loaded on the first A2A request: its SDK (with jose) is memory a daemon nobody asks
 * as an agent never carries (issue 33 item 2).
 */
async function a2aFor(services: Services): Promise<A2aService> {
  return (await import('./service.js')).a2aFor(services);
}

function isStream(v: unknown): v is AsyncGenerator<unknown> {
  return typeof (v as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** A JSON-RPC stream as server-sent events (one `data:` event per envelope), without buffering. */
async function sseReply(stream: AsyncGenerator<unknown>, id: unknown, version: string): Promise<Response> {
  const it = stream[Symbol.asyncIterator]();
  // An error before the first event is a plain JSON-RPC error reply, not a stream (as the SDK's own servers do).
  const first = await it.next();
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) controller.enqueue(enc.encode(`data: ${JSON.stringify(first.value)}\n\n`));
      else controller.close();
    },
    async pull(controller) {
      try {
        const next = await it.next();
        if (next.done) controller.close();
        else controller.enqueue(enc.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      } catch (err) {
        const error = { jsonrpc: '2.0', id: id ?? null, error: { code: -32603, message: publicReason(err, 'stream failed').slice(0, 300) } };
        controller.enqueue(enc.encode(`data: ${JSON.stringify(error)}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      await it.return?.(undefined);
    },
  });
  return new FastResponse(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', [HEADER.version]: version },
  });
}

/**
 * An agent card as the A2A specification defines it (v0.3 or v1.0, chosen by the A2A-Version header): the
 * fields every version has are named; the rest of the card is the specification's, passed through.
 */
const cardReply = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  capabilities: z.looseObject({ streaming: z.boolean().optional() }),
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(z.looseObject({ id: z.string(), name: z.string(), description: z.string() })),
});
/** A JSON-RPC 2.0 response: the method's result (an A2A task or message), or an error. */
const rpcReply = orEventStream(
  z.union([
    z.object({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number(), z.null()]), result: z.unknown() }),
    z.object({
      jsonrpc: z.literal('2.0'),
      id: z.union([z.string(), z.number(), z.null()]),
      error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
    }),
  ]),
);

function cardRoute(path: string, legacyOnly: boolean) {
  return route({
    method: 'GET',
    path,
    tier: 'public',
    tag: 'a2a',
    reply: cardReply,
    summary: legacyOnly ? 'A2A agent card, older well-known path (v0.3 card)' : 'A2A agent card (v1.0 card when the A2A-Version header asks for 1.x, else v0.3)',
    handler: async ({ event, services }) =>
      json(200, (await a2aFor(services)).cardFor(event.url.origin, legacyOnly ? null : event.req.headers.get('a2a-version')), { vary: 'A2A-Version', 'cache-control': 'no-cache' }),
  });
}

/** The A2A agent (spec "What the service does" 6): agent card and JSON-RPC endpoint. */
export const a2aRoutes: RouteDef[] = [
  cardRoute('/.well-known/agent-card.json', false),
  cardRoute('/.well-known/agent.json', true),
  route({
    method: 'POST',
    path: A2A_PATH,
    // CONTRACT: a management route (session, manage-scope key, CLI token from loopback). An agent that
    // talks to router runs tasks with the owner's models, so it gets a manage key, not any proxy key.
    tier: 'management',
    tag: 'a2a',
    summary: 'A2A JSON-RPC: message/send, message/stream (SSE), tasks/get, tasks/cancel (v0.3 names) and the v1.0 methods; answered by the agents.a2aModel model',
    rawBody: true,
    reply: rpcReply,
    handler: async ({ event, services, auth }) => {
      const body = await readJsonBody(event, services.settings.get().maxRequestBodyBytes);
      const out = await (await a2aFor(services)).handle(body, auth, event.req.headers);
      if (isStream(out)) return sseReply(out, (body as { id?: unknown }).id, services.version);
      return json(200, out);
    },
  }),
];
