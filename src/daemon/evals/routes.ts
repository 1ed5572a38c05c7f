import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { NO_CONTENT } from '../http/replies.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { EvalRecord } from '../../shared/observability.js';
import { evalDetailReply, evalListReply, evalRecord, evalRun } from './replies.js';
import { evalBody, runBody } from './schema.js';

const runsQuery = z.object({ runs: z.coerce.number().int().min(0).max(100).default(20) }).strict();

async function evalOf(services: Services, id: string): Promise<EvalRecord> {
  const ev = await services.evals.store.get(id);
  if (!ev) throw new RouterError(404, `No eval '${id.slice(0, 200)}'.`);
  return ev;
}

/** Evals: prompt sets with checks, run against models and combos through the executor (docs/observability.md). */
export const evalRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/evals',
    tier: 'management',
    tag: 'evals',
    summary: 'Evals, newest first, each with the scores of its latest run',
    reply: evalListReply,
    handler: async ({ services }) => {
      const evals = await services.evals.store.list();
      const latest = await services.evals.store.latestRuns(evals.map((ev) => ev.id));
      const out = [];
      for (const ev of evals) out.push({ ...ev, running: await services.evals.isRunning(ev.id), lastRun: latest.get(ev.id) ?? null });
      return { evals: out };
    },
  }),
  route({
    method: 'POST',
    path: '/api/evals',
    tier: 'management',
    tag: 'evals',
    summary: 'Define an eval: prompts with checks (contains, not-contains, equals, regex, json-valid), the models or combos to run, max tokens, concurrency',
    status: 201,
    body: evalBody,
    reply: evalRecord,
    handler: async ({ services, body }) => {
      const created = await services.evals.store.add(body);
      if (!created) throw new RouterError(409, `An eval named '${body.name}' exists already.`, { extra: { param: 'name' } });
      return json(201, created);
    },
  }),
  route({
    method: 'GET',
    path: '/api/evals/:id',
    tier: 'management',
    tag: 'evals',
    summary: 'One eval (by id or name) with its newest runs (`runs`, default 20): scores, latency, tokens and cost per model',
    query: runsQuery,
    reply: evalDetailReply,
    handler: async ({ services, params, query }) => {
      const ev = await evalOf(services, params.id ?? '');
      return { ...ev, running: await services.evals.isRunning(ev.id), runs: await services.evals.store.runs(ev.id, query.runs) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/evals/:id',
    tier: 'management',
    tag: 'evals',
    summary: 'Delete an eval and its runs',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      const ev = await evalOf(services, params.id ?? '');
      if (await services.evals.isRunning(ev.id)) throw new RouterError(409, `Eval '${ev.name}' is running; delete it when the run has finished.`);
      await services.evals.store.delete(ev.id);
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/api/evals/:id/run',
    tier: 'management',
    tag: 'evals',
    summary:
      "Run an eval against its models (or `models`): every case through the executor (usage rows under endpoint eval:<id>), at most `concurrency` calls at once. 202 with the run, or with `wait: true` 200 once it finished, with per-case results",
    status: 202,
    body: runBody,
    reply: evalRun,
    handler: async ({ services, params, body }) => {
      const ev = await evalOf(services, params.id ?? '');
      if (await services.evals.isRunning(ev.id)) throw new RouterError(409, `Eval '${ev.name}' is running already; wait for its run to finish.`);
      const { run, done } = await services.evals.start(ev, body.models ?? ev.models);
      if (!body.wait) return json(202, run);
      await done;
      return services.evals.store.run(ev.id, run.id, true);
    },
  }),
  route({
    method: 'GET',
    path: '/api/evals/:id/runs/:runId',
    tier: 'management',
    tag: 'evals',
    summary: 'One run of an eval with its scores and per-case results (checks passed, reply, error, latency, tokens, cost)',
    reply: evalRun,
    handler: async ({ services, params }) => {
      const ev = await evalOf(services, params.id ?? '');
      const run = await services.evals.store.run(ev.id, params.runId ?? '', true);
      if (!run) throw new RouterError(404, `Eval '${ev.name}' has no run '${(params.runId ?? '').slice(0, 100)}'.`);
      return run;
    },
  }),
];
