import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { EvalRecord, EvalRun } from '../../shared/observability.js';
import { CliError, table } from '../io.js';
import { costTotal } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const pct = (n: number) => `${Math.round(n * 100)}%`;
const ms = (n: number | null) => (n === null ? '-' : `${Math.round(n)}ms`);

/** A run's per-model scores as a table. */
export function formatRun(run: EvalRun): string {
  const head = `run ${run.id} ${run.status} (started ${run.startedAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''})`;
  const rows = run.scores.map((s) => [s.model, `${s.passed}/${s.cases}`, pct(s.score), String(s.errors), ms(s.avgLatencyMs), ms(s.p50LatencyMs), String(s.tokensIn), String(s.tokensOut), costTotal(s.costUsd, s.unpricedRequests)]);
  return `${head}\n${table(['MODEL', 'PASSED', 'SCORE', 'ERRORS', 'AVG LATENCY', 'P50', 'IN', 'OUT', 'COST'], rows, [], { flex: [0] })}`;
}

/** The failed cases of a run, one line each (which checks failed, or the error). */
function failures(ev: EvalRecord, run: EvalRun): string[] {
  return (run.results ?? [])
    .filter((r) => !r.passed)
    .map((r) => {
      const name = ev.cases[r.caseIndex]?.name ?? `case ${r.caseIndex + 1}`;
      const why = r.error ?? `failed ${r.checks.filter((c) => !c.passed).map((c) => c.type).join(', ')}`;
      return `  ${r.model}  ${name}: ${why}`;
    });
}

export function register(program: Command, ctx: CommandContext): void {
  const evals = program.command('evals').description('prompt sets with checks, run against models and combos (scores, latency, cost)');

  examples(withCommon(evals.command('list')), ['router evals list', 'router evals list --json'])
    .description('list evals with the scores of their latest run')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts) => {
        const { evals: list } = await ctx.client(opts).call('GET /api/evals');
        ctx.emit(opts, list, () => {
          if (list.length === 0) return 'no evals; define one with `router evals create <file.json>` (docs/observability.md, "Evals")';
          const rows = list.map((e) => [e.name, String(e.cases.length), e.models.join(', '), e.running ? 'running' : e.lastRun ? e.lastRun.scores.map((s) => `${s.model} ${pct(s.score)}`).join(', ') : 'never run']);
          return table(['NAME', 'CASES', 'MODELS', 'LAST RUN'], rows, [], { flex: [0, 2, 3] });
        });
        return 0;
      }),
    );

  examples(withCommon(evals.command('create').argument('<file>', 'JSON definition: {name, models, cases: [{prompt, checks}], maxTokens?, concurrency?}')), [
    'router evals create evals/basics.json',
  ])
    .description('define an eval from a JSON file (the body of POST /api/evals)')
    .option('--json', 'print the stored eval as JSON')
    .action(
      ctx.run(async (opts, file: string) => {
        let body: unknown;
        try {
          body = JSON.parse(readFileSync(file, 'utf8'));
        } catch (err) {
          throw new CliError(`cannot read ${file} as JSON: ${(err as Error).message}`, 2);
        }
        const ev = await ctx.client(opts).request<EvalRecord>('POST', '/api/evals', body);
        ctx.emit(opts, ev, () => `eval ${ev.name} created (${ev.cases.length} cases, ${ev.models.length} models); run it with \`router evals run ${ev.name}\``);
        return 0;
      }),
    );

  examples(withCommon(evals.command('run').argument('<eval>', 'name or id')), ['router evals run basics', 'router evals run basics --model openai/gpt-4o-mini --model fast'])
    .description('run an eval now and wait for the scores (every case through the router: usage and cost are recorded)')
    .option('--model <model...>', 'run these models or combos instead of the eval\'s own')
    .option('--json', 'print the run as JSON (with per-case results)')
    .action(
      ctx.run(async (opts, id: string) => {
        const c = ctx.client(opts);
        const ev = await c.call('GET /api/evals/{id}', { params: { id } });
        const run = await c.call('POST /api/evals/{id}/run', { params: { id: ev.id }, body: { wait: true, ...(opts.model ? { models: opts.model } : {}) } }, 3_600_000);
        ctx.emit(opts, run, () => [formatRun(run), ...failures(ev, run)].join('\n'));
        return 0;
      }),
    );

  examples(withCommon(evals.command('show').argument('<eval>', 'name or id')), ['router evals show basics', 'router evals show basics --run <run id> --json'])
    .description('an eval\'s cases and its recent runs, or one run with its failed cases')
    .option('--run <id>', 'one run, with per-case results')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts, id: string) => {
        const c = ctx.client(opts);
        const ev = await c.call('GET /api/evals/{id}', { params: { id } });
        if (opts.run) {
          const run = await c.call('GET /api/evals/{id}/runs/{runId}', { params: { id: ev.id, runId: opts.run } });
          ctx.emit(opts, run, () => [formatRun(run), ...failures(ev, run)].join('\n'));
          return 0;
        }
        ctx.emit(opts, ev, () =>
          [
            `${ev.name}: ${ev.cases.length} cases, models ${ev.models.join(', ')}, max tokens ${ev.maxTokens}, concurrency ${ev.concurrency}`,
            ...ev.cases.map((k, i) => `  ${k.name ?? `case ${i + 1}`}: ${k.checks.map((x) => x.type).join(', ')}`),
            ...(ev.runs.length ? ev.runs.map(formatRun) : ['never run']),
          ].join('\n'),
        );
        return 0;
      }),
    );
}
