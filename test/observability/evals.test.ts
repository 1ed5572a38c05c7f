/**
 * Evals through the real daemon and a mock upstream whose replies pass or fail the checks: scores, latency
 * and cost per model, usage rows written by the executor, bounded concurrency, bad definitions refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';
import { isolateCliConfig, run as cli, show } from '../cli/helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-up-openai' }, { provider: 'anthropic', apiKey: 'sk-up-anthropic' }]);
});
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

const manage = (method: string, path: string, body?: unknown) => env.router.manage(method, path, body);

const CASES = [
  { name: 'json', prompt: 'Answer with JSON: what is six times seven?', checks: [{ type: 'json-valid' }, { type: 'contains', value: '42' }] },
  { name: 'capital', system: 'Be brief.', prompt: 'What is the capital of France?', checks: [{ type: 'regex', value: '\\bparis\\b', flags: 'i' }, { type: 'not-contains', value: 'London' }] },
  { name: 'exact', prompt: 'Reply with the word yes.', checks: [{ type: 'equals', value: 'YES', ignoreCase: true }] },
];

/** OpenAI's model answers every case right; Anthropic's answers every one wrong. */
function scriptReplies(delayMs = 0): number[] {
  const arrivals: number[] = [];
  env.mock.handle((req) => {
    arrivals.push(Date.now());
    const body = JSON.stringify(req.json);
    const good = req.provider === 'openai';
    let text: string;
    if (body.includes('six times seven')) text = good ? '```json\n{"answer": 42}\n```' : 'forty-two, I think';
    else if (body.includes('capital of France')) text = good ? 'It is Paris.' : 'London';
    else text = good ? ' yes\n' : 'no';
    const reply = { type: 'text' as const, text, usage: { inputTokens: 1000, outputTokens: 200 } };
    return delayMs ? { type: 'delay', ms: delayMs, then: reply } : reply;
  });
  return arrivals;
}

describe('evals', () => {
  it('empty list; bad definitions are 400 naming the field; unknown ids 404; names unique (409)', async () => {
    expect((await manage('GET', '/api/evals')).json).toEqual({ evals: [] });
    const base = { name: 'bad', models: ['openai/gpt-4o-mini'], cases: CASES };
    const bad = async (body: unknown, param: string) => {
      const r = await manage('POST', '/api/evals', body);
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect(r.json.error.type).toBe('invalid_request_error');
      expect(r.json.error.param).toBe(param);
    };
    await bad({ ...base, cases: [] }, 'cases');
    await bad({ ...base, models: [] }, 'models');
    await bad({ ...base, models: ['a/b', 'a/b'] }, 'models');
    await bad({ ...base, cases: [{ prompt: 'x', checks: [{ type: 'regex', value: '(' }] }] }, 'cases.0.checks.0.value');
    await bad({ ...base, cases: [{ prompt: 'x', checks: [{ type: 'regex', value: 'a', flags: 'g' }] }] }, 'cases.0.checks.0.flags');
    await bad({ ...base, cases: [{ prompt: 'x', checks: [{ type: 'sounds-nice' }] }] }, 'cases.0.checks.0.type');
    await bad({ ...base, concurrency: 9 }, 'concurrency');
    await bad({ ...base, extra: true }, 'body');

    expect((await manage('GET', '/api/evals/missing')).status).toBe(404);
    expect((await manage('POST', '/api/evals/missing/run', {})).status).toBe(404);

    expect((await manage('POST', '/api/evals', { ...base, name: 'once' })).status).toBe(201);
    const again = await manage('POST', '/api/evals', { ...base, name: 'once' });
    expect(again.status).toBe(409);
    expect((await manage('DELETE', '/api/evals/once')).status).toBe(204);
    expect((await manage('GET', '/api/evals/once')).status).toBe(404);
  });

  it('scores, latency and cost per model from replies that pass and fail; usage rows written by the executor', async () => {
    scriptReplies();
    const created = await manage('POST', '/api/evals', {
      name: 'basics',
      description: 'three small checks',
      models: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'nowhere/model-x'],
      cases: CASES,
      maxTokens: 64,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const id = created.json.id as string;
    expect(created.json).toMatchObject({ name: 'basics', maxTokens: 64, concurrency: 2 });

    const r = await manage('POST', `/api/evals/${id}/run`, { wait: true });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const run = r.json;
    expect(run.status).toBe('completed');
    const [openai, anthropic, nowhere] = run.scores;
    expect(openai).toMatchObject({ model: 'openai/gpt-4o-mini', cases: 3, passed: 3, score: 1, errors: 0, tokensIn: 3000, tokensOut: 600 });
    expect(anthropic).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', cases: 3, passed: 0, score: 0, errors: 0, tokensIn: 3000, tokensOut: 600 });
    expect(nowhere).toMatchObject({ model: 'nowhere/model-x', cases: 3, passed: 0, errors: 3, costUsd: 0, avgLatencyMs: null });
    expect(openai.costUsd).toBeGreaterThan(0);
    expect(anthropic.costUsd).toBeGreaterThan(openai.costUsd);
    expect(openai.avgLatencyMs).toBeGreaterThan(0);
    expect(openai.p50LatencyMs).toBeGreaterThan(0);

    // Per-case results: which checks failed, the reply, the serving provider and its trace.
    const results = run.results as any[];
    expect(results).toHaveLength(9);
    const wrongCapital = results.find((x) => x.model === 'anthropic/claude-sonnet-4-5' && x.caseIndex === 1);
    expect(wrongCapital).toMatchObject({ passed: false, output: 'London', provider: 'anthropic', checks: [{ type: 'regex', passed: false }, { type: 'not-contains', passed: false }] });
    const jsonCase = results.find((x) => x.model === 'openai/gpt-4o-mini' && x.caseIndex === 0);
    expect(jsonCase.checks).toEqual([{ type: 'json-valid', passed: true }, { type: 'contains', passed: true }]);
    const missing = results.find((x) => x.model === 'nowhere/model-x');
    expect(missing.error).toMatch(/nowhere/);

    // The system prompt and max tokens reached the upstream.
    const capitalCall = env.mock.requests.find((q) => q.provider === 'openai' && JSON.stringify(q.json).includes('capital of France'))!;
    expect(JSON.stringify(capitalCall.json)).toContain('Be brief.');

    // The executor wrote the usage rows, priced: the run's cost is theirs.
    const logs = (await manage('GET', '/api/logs?limit=500')).json.logs.filter((l: any) => l.endpoint === `eval:${id}`);
    expect(logs.filter((l: any) => l.status === 200)).toHaveLength(6);
    const logged = logs.reduce((n: number, l: any) => n + l.costUsd, 0);
    expect(logged).toBeCloseTo(openai.costUsd + anthropic.costUsd, 10);
    const traced = logs.find((l: any) => l.traceId === jsonCase.traceId);
    expect(traced).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', tokensIn: 1000, tokensOut: 200 });

    // GET shows the eval with its runs; the list shows the latest run.
    const shown = await manage('GET', `/api/evals/${id}`);
    expect(shown.json.runs).toHaveLength(1);
    expect(shown.json.runs[0].scores).toEqual(run.scores);
    expect(shown.json.runs[0].results).toBeUndefined();
    const byName = await manage('GET', '/api/evals/basics');
    expect(byName.json.id).toBe(id);
    const list = await manage('GET', '/api/evals');
    expect(list.json.evals[0]).toMatchObject({ id, running: false, lastRun: { id: run.id } });
    const detail = await manage('GET', `/api/evals/${id}/runs/${run.id}`);
    expect(detail.json.results).toEqual(run.results);
    expect((await manage('GET', `/api/evals/${id}/runs/nope`)).status).toBe(404);
  });

  it('a model with no known price: its cases are unpriced (costUsd null), counted apart in the scores, never $0', async () => {
    scriptReplies();
    const created = await manage('POST', '/api/evals', { name: 'unpriced', models: ['openai/my-unpriced-finetune', 'openai/gpt-4o-mini'], cases: CASES });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const run = (await manage('POST', `/api/evals/${created.json.id}/run`, { wait: true })).json;
    const [unpriced, priced] = run.scores;
    expect(unpriced).toMatchObject({ model: 'openai/my-unpriced-finetune', cases: 3, passed: 3, errors: 0, costUsd: 0, unpricedRequests: 3 });
    expect(priced).toMatchObject({ model: 'openai/gpt-4o-mini', unpricedRequests: 0 });
    expect(priced.costUsd).toBeGreaterThan(0);
    const results = run.results as any[];
    expect(results.filter((x) => x.model === 'openai/my-unpriced-finetune').map((x) => x.costUsd)).toEqual([null, null, null]);
    // Stored that way: the run read back says the same.
    const again = (await manage('GET', `/api/evals/${created.json.id}/runs/${run.id}`)).json;
    expect(again.scores).toEqual(run.scores);
    expect(again.results.find((x: any) => x.model === 'openai/my-unpriced-finetune').costUsd).toBeNull();
    // The CLI's table says "3 requests unpriced" where the cost would be.
    const cliConfig = isolateCliConfig();
    try {
      const shown = await cli(['evals', 'show', 'unpriced', '--home', env.router.home]);
      expect(shown.exitCode, show(shown)).toBe(0);
      expect(shown.stdout).toMatch(/openai\/my-unpriced-finetune\s.*3 requests unpriced/);
      expect(shown.stdout).not.toMatch(/openai\/my-unpriced-finetune\s.*\$0\s/);
    } finally {
      rmSync(cliConfig, { recursive: true, force: true });
    }
  });

  it('runs in the background (202), never more than `concurrency` calls at once, one run per eval at a time', async () => {
    const arrivals = scriptReplies(150);
    const created = await manage('POST', '/api/evals', { name: 'bounded', models: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5'], cases: CASES, concurrency: 2 });
    const id = created.json.id as string;
    const started = await manage('POST', `/api/evals/${id}/run`, {});
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ status: 'running', models: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5'] });
    const twice = await manage('POST', `/api/evals/${id}/run`, {});
    expect(twice.status).toBe(409);
    expect((await manage('DELETE', `/api/evals/${id}`)).status).toBe(409);
    expect((await manage('GET', `/api/evals/${id}`)).json.running).toBe(true);

    let run: any;
    for (let i = 0; i < 200; i++) {
      run = (await manage('GET', `/api/evals/${id}/runs/${started.json.id}`)).json;
      if (run.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(run.status).toBe('completed');
    expect(run.results).toHaveLength(6);
    expect(arrivals).toHaveLength(6);
    // Each call takes 150 ms at the upstream: with 2 at a time, 6 calls arrive in 3 waves of 2.
    const sorted = [...arrivals].sort((a, b) => a - b);
    for (let i = 2; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 2]!).toBeGreaterThanOrEqual(140);
    expect(sorted[1]! - sorted[0]!).toBeLessThan(140);

    // A subset of models may be run.
    const subset = await manage('POST', `/api/evals/${id}/run`, { models: ['anthropic/claude-sonnet-4-5'], wait: true });
    expect(subset.json.scores.map((s: any) => s.model)).toEqual(['anthropic/claude-sonnet-4-5']);
    expect((await manage('GET', `/api/evals/${id}`)).json.runs.map((r: any) => r.id)).toEqual([subset.json.id, started.json.id]);
  });

  it('router evals create | run | show | list', async () => {
    scriptReplies();
    const cliConfig = isolateCliConfig();
    const dir = mkdtempSync(join(tmpdir(), 'router-evals-'));
    try {
      const file = join(dir, 'cli.json');
      writeFileSync(file, JSON.stringify({ name: 'from-cli', models: ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5'], cases: CASES }));
      const home = ['--home', env.router.home];
      const created = await cli(['evals', 'create', file, ...home]);
      expect(created.exitCode, show(created)).toBe(0);
      expect(created.stdout).toMatch(/eval from-cli created \(3 cases, 2 models\)/);

      const ran = await cli(['evals', 'run', 'from-cli', ...home]);
      expect(ran.exitCode, show(ran)).toBe(0);
      expect(ran.stdout).toMatch(/openai\/gpt-4o-mini\s+3\/3\s+100%/);
      expect(ran.stdout).toMatch(/anthropic\/claude-sonnet-4-5\s+0\/3\s+0%/);
      expect(ran.stdout).toMatch(/anthropic\/claude-sonnet-4-5 {2}capital: failed regex, not-contains/);

      const asJson = await cli(['evals', 'run', 'from-cli', '--model', 'openai/gpt-4o-mini', '--json', ...home]);
      const runJson = JSON.parse(asJson.stdout);
      expect(runJson.scores).toEqual([expect.objectContaining({ model: 'openai/gpt-4o-mini', score: 1 })]);

      const shown = await cli(['evals', 'show', 'from-cli', ...home]);
      expect(shown.stdout).toMatch(/from-cli: 3 cases/);
      expect(shown.stdout.match(/^run /gm)).toHaveLength(2);
      const oneRun = await cli(['evals', 'show', 'from-cli', '--run', runJson.id, '--json', ...home]);
      expect(JSON.parse(oneRun.stdout).results).toHaveLength(3);

      const listed = await cli(['evals', 'list', ...home]);
      expect(listed.stdout).toMatch(/from-cli\s+3\s+openai\/gpt-4o-mini, anthropic\/claude-sonnet-4-5\s+openai\/gpt-4o-mini 100%/);
      const missing = await cli(['evals', 'show', 'nope', ...home]);
      expect(missing.exitCode).not.toBe(0);
      expect(missing.stderr).toMatch(/No eval 'nope'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(cliConfig, { recursive: true, force: true });
    }
  });
});
