import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { extractZip } from '../archive/unzip.js';
import { badRequest, RouterError } from '../http/errors.js';
import { readBodyBytes, readJsonBody, validate } from '../http/body.js';
import { mediaTypeEssence } from '../http/request-guard.js';
import { NO_CONTENT } from '../http/replies.js';
import { noContent, route, type RouteDef, type RouteContext } from '../http/routes.js';
import type { Services } from '../services.js';
import { readSkillFolder, SKILL_LIMITS, type Skill, type SkillCatalog, type SkillSummary } from './catalog.js';

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed'] as const;
/** The upload limit: the compressed archive is never larger than what it holds. */
const MAX_UPLOAD_BYTES = SKILL_LIMITS.maxBytes;

const keysSchema = z.array(z.string().min(1).max(100)).max(1000);
const importBody = z.strictObject({
  /** A skill folder on this machine (loopback callers only). */
  path: z.string().min(1).max(4096),
  /** API key ids whose requests get the skill's instructions. */
  keys: keysSchema.optional(),
  replace: z.boolean().optional(),
});
const patchBody = z.strictObject({ keys: keysSchema });
/** A skill as listed: everything but its instructions. */
const summaryReply = z.object({ name: z.string(), description: z.string(), files: z.array(z.string()), bytes: z.number(), keys: z.array(z.string()) }) satisfies z.ZodType<SkillSummary>;
/** One skill: its instructions (SKILL.md after the front matter) too. */
const skillReply = summaryReply.extend({ body: z.string() }) satisfies z.ZodType<Skill>;

const zipQuery = z.object({ keys: z.string().max(100_000).optional(), replace: z.enum(['true', 'false']).optional() });

function catalogOf(services: Services): SkillCatalog {
  return services.skills;
}

/** The key ids given exist (a typo would silently inject nothing). */
function checkKeys(services: Services, keys: string[] | undefined): void {
  for (const id of keys ?? []) if (!services.keys.get(id)) throw badRequest(`No API key with id '${id}'.`, 'keys');
}

function withoutBody(s: Skill) {
  const { body: _body, ...rest } = s;
  return rest;
}

/** POST /api/skills: a JSON body naming a local folder, or a zip archive as the body. */
async function importSkill(ctx: RouteContext): Promise<Response> {
  const { services, event } = ctx;
  const type = mediaTypeEssence(event.req.headers.get('content-type'));
  let skill: Skill;
  if ((ZIP_TYPES as readonly string[]).includes(type)) {
    const q = validate(zipQuery, Object.fromEntries(new URL(event.req.url).searchParams), 'query');
    const keys = q.keys ? q.keys.split(',').filter(Boolean) : undefined;
    checkKeys(services, keys);
    const bytes = await readBodyBytes(event, MAX_UPLOAD_BYTES);
    skill = await catalogOf(services).add(extractZip(bytes, SKILL_LIMITS), { keys, replace: q.replace === 'true' });
  } else if (type === 'application/json') {
    const body = validate(importBody, await readJsonBody(event, 64 * 1024), 'body');
    // Reading a folder of this machine is for callers on this machine (a remote manage key must upload).
    if (!ctx.auth.loopback) throw new RouterError(403, 'Importing a skill from a folder is only for callers on this machine; upload a zip instead.');
    if (!isAbsolute(body.path)) throw badRequest('The folder path must be absolute.', 'path');
    checkKeys(services, body.keys);
    skill = await catalogOf(services).add(readSkillFolder(body.path), { keys: body.keys, replace: body.replace });
  } else {
    throw new RouterError(415, `Content-Type must be application/json ({path}) or ${ZIP_TYPES[0]} (the archive as the body).`);
  }
  return new Response(JSON.stringify(withoutBody(skill)), { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

/** The skills catalog (docs/agents.md "Skills"). */
export const skillRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/skills',
    tier: 'management',
    tag: 'skills',
    summary: 'List the Agent Skills in the catalog (name, description, files, keys they are injected for)',
    reply: z.object({ skills: z.array(summaryReply) }),
    handler: ({ services }) => ({ skills: catalogOf(services).list() }),
  }),
  route({
    method: 'POST',
    path: '/api/skills',
    tier: 'management',
    tag: 'skills',
    summary: 'Import a skill: JSON {path, keys?, replace?} naming a local folder (loopback callers), or a zip archive as the body (?keys=id,id&replace=true)',
    rawBody: true,
    bodyTypes: ZIP_TYPES,
    bodyLimit: MAX_UPLOAD_BYTES,
    status: 201,
    reply: summaryReply,
    handler: importSkill,
  }),
  route({
    method: 'GET',
    path: '/api/skills/:name',
    tier: 'management',
    tag: 'skills',
    summary: "One skill with its instructions (SKILL.md's body)",
    reply: skillReply,
    handler: ({ services, params }) => {
      const s = catalogOf(services).get(params.name!);
      if (!s) throw new RouterError(404, `No skill named '${params.name}'.`);
      return s;
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/skills/:name',
    tier: 'management',
    tag: 'skills',
    summary: "Set the API keys whose requests get the skill's instructions",
    body: patchBody,
    reply: summaryReply,
    handler: async ({ services, params, body }) => {
      checkKeys(services, body.keys);
      const s = await catalogOf(services).setKeys(params.name!, body.keys);
      if (!s) throw new RouterError(404, `No skill named '${params.name}'.`);
      return withoutBody(s);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/skills/:name',
    tier: 'management',
    tag: 'skills',
    summary: 'Remove a skill and its files',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      if (!(await catalogOf(services).remove(params.name!))) throw new RouterError(404, `No skill named '${params.name}'.`);
      return noContent();
    },
  }),
];
