import type { z } from 'zod';
import { bodyLimitFor } from '../http/app.js';
import { readJsonBody } from '../http/body.js';
import { badRequest } from '../http/errors.js';
import { orEventStream, orMedia, rawReply } from '../http/replies.js';
import { route, type RouteContext, type RouteDef } from '../http/routes.js';
import type { Family, FamilyInput, FamilyReply } from '../families/family.js';
import { families } from '../families/registry.js';
import { runFamily } from './family-run.js';
import { readMultipart } from './multipart.js';

/** Multipart routes take uploads; honoured only with a credential header (http/request-guard.ts). */
const MULTIPART = ['multipart/form-data'] as const;

/** Reads the client body: a JSON object, size-limited by the client-route limit. */
export async function readObject(ctx: RouteContext, def: RouteDef): Promise<Record<string, unknown>> {
  const raw = await readJsonBody(ctx.event, bodyLimitFor(def, ctx.services));
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Request body must be a JSON object.');
  // Kept for the traffic capture of a request refused later (http/app.ts).
  ctx.event.context.clientBody = raw;
  return raw as Record<string, unknown>;
}

/** A family's reply as the route table declares it: JSON (or other media, or SSE on request), or media only. */
export function familyReply(r: FamilyReply): z.ZodType {
  if (!r.json) return rawReply(...(r.media ?? []), ...(r.events ? ['text/event-stream'] : []));
  let reply = r.json;
  if (r.media?.length) reply = orMedia(reply, r.media);
  return r.events ? orEventStream(reply, r.events) : reply;
}

/** The client route of one endpoint family: its body read as the family says, then run through the executor. */
export function familyRoute(family: Family<any>): RouteDef {
  const r = family.route;
  const read = async (ctx: RouteContext): Promise<FamilyInput> => {
    if (r.body === 'json') return { json: await readObject(ctx, def) };
    const limit = r.bodyBytes ?? bodyLimitFor(def, ctx.services);
    return { form: await readMultipart(ctx.event, { fileBytes: r.fileBytes ?? limit, totalBytes: limit, files: r.files }) };
  };
  const def: RouteDef = route({
    method: 'POST',
    path: r.path,
    tier: 'client',
    tag: 'proxy',
    summary: r.summary,
    rawBody: true,
    reply: familyReply(r.reply),
    ...(r.body === 'multipart' ? { bodyTypes: MULTIPART } : {}),
    ...(r.bodyBytes !== undefined ? { bodyLimit: r.bodyBytes } : {}),
    handler: async (ctx) => runFamily(ctx, family, await read(ctx)),
  });
  return def;
}

/** The routes of every registered endpoint family (client tier). */
export function familyRoutes(list: readonly Family<any>[] = families): RouteDef[] {
  return list.map(familyRoute);
}
