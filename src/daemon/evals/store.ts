import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { EvalCaseResult, EvalModelScore, EvalRecord, EvalRun } from '../../shared/observability.js';
import type { EvalBody } from './schema.js';

interface EvalRow {
  id: string;
  name: string;
  description: string;
  models: string;
  cases: string;
  max_tokens: number;
  concurrency: number;
  created_at: string;
  updated_at: string;
}

interface RunRow {
  id: string;
  eval_id: string;
  status: EvalRun['status'];
  models: string;
  started_at: number;
  finished_at: number | null;
}

interface ResultRow {
  run_id: string;
  model: string;
  case_index: number;
  passed: number;
  checks: string;
  output: string | null;
  error: string | null;
  latency_ms: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  /** Migration 0026; null on older rows. */
  cost_source: string | null;
  provider: string | null;
  trace_id: string | null;
}

const fromEval = (r: EvalRow): EvalRecord => ({
  id: r.id,
  name: r.name,
  description: r.description,
  models: JSON.parse(r.models) as string[],
  cases: JSON.parse(r.cases) as EvalRecord['cases'],
  maxTokens: r.max_tokens,
  concurrency: r.concurrency,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const fromResult = (r: ResultRow): EvalCaseResult => ({
  model: r.model,
  caseIndex: r.case_index,
  passed: r.passed === 1,
  checks: JSON.parse(r.checks) as EvalCaseResult['checks'],
  output: r.output,
  error: r.error,
  latencyMs: r.latency_ms,
  tokensIn: r.tokens_in,
  tokensOut: r.tokens_out,
  costUsd: r.cost_source === 'unpriced' ? null : r.cost_usd,
  provider: r.provider,
  traceId: r.trace_id,
});

const round = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;

/** Per-model figures of a run's results, in the order the run named the models. */
export function scoresOf(models: readonly string[], results: readonly EvalCaseResult[]): EvalModelScore[] {
  return models.map((model) => {
    const mine = results.filter((r) => r.model === model);
    const answered = mine.filter((r) => r.error === null).map((r) => r.latencyMs).sort((a, b) => a - b);
    const passed = mine.filter((r) => r.passed).length;
    return {
      model,
      cases: mine.length,
      passed,
      score: mine.length ? round(passed / mine.length, 4) : 0,
      errors: mine.length - answered.length,
      avgLatencyMs: answered.length ? round(answered.reduce((a, b) => a + b, 0) / answered.length, 2) : null,
      p50LatencyMs: answered.length ? answered[Math.ceil(answered.length / 2) - 1]! : null,
      tokensIn: mine.reduce((n, r) => n + r.tokensIn, 0),
      tokensOut: mine.reduce((n, r) => n + r.tokensOut, 0),
      costUsd: round(mine.reduce((n, r) => n + (r.costUsd ?? 0), 0), 12),
      unpricedRequests: mine.filter((r) => r.costUsd === null).length,
    };
  });
}

/** Evals, their runs and per-case results (tables evals, eval_runs, eval_results). */
export class EvalStore {
  constructor(private readonly db: Db) {
    // Runs a previous daemon left unfinished (stopped mid-run) will never finish.
    db.prepare("UPDATE eval_runs SET status = 'interrupted', finished_at = ? WHERE status = 'running'").run(Date.now());
  }

  list(): EvalRecord[] {
    return (this.db.prepare('SELECT * FROM evals ORDER BY created_at DESC, rowid DESC').all() as EvalRow[]).map(fromEval);
  }

  get(idOrName: string): EvalRecord | undefined {
    const row = this.db.prepare('SELECT * FROM evals WHERE id = ? OR name = ?').get(idOrName, idOrName) as EvalRow | undefined;
    return row && fromEval(row);
  }

  /** Creates an eval; undefined when the name is taken. */
  create(body: EvalBody): EvalRecord | undefined {
    if (this.db.prepare('SELECT 1 FROM evals WHERE name = ?').get(body.name)) return undefined;
    const now = new Date().toISOString();
    const id = randomUUID();
    this.db
      .prepare('INSERT INTO evals (id, name, description, models, cases, max_tokens, concurrency, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, body.name, body.description, JSON.stringify(body.models), JSON.stringify(body.cases), body.maxTokens, body.concurrency, now, now);
    return this.get(id);
  }

  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM evals WHERE id = ?').run(id).changes > 0;
  }

  startRun(evalId: string, models: readonly string[]): EvalRun {
    const id = randomUUID();
    const at = Date.now();
    this.db.prepare("INSERT INTO eval_runs (id, eval_id, status, models, started_at) VALUES (?, ?, 'running', ?, ?)").run(id, evalId, JSON.stringify(models), at);
    return { id, evalId, status: 'running', models: [...models], startedAt: new Date(at).toISOString(), finishedAt: null, scores: [] };
  }

  addResult(runId: string, r: EvalCaseResult): void {
    this.db
      .prepare(
        `INSERT INTO eval_results (run_id, model, case_index, passed, checks, output, error, latency_ms, tokens_in, tokens_out, cost_usd, cost_source, provider, trace_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(runId, r.model, r.caseIndex, r.passed ? 1 : 0, JSON.stringify(r.checks), r.output, r.error, r.latencyMs, r.tokensIn, r.tokensOut, r.costUsd ?? 0, r.costUsd === null ? 'unpriced' : 'computed', r.provider, r.traceId);
  }

  finishRun(runId: string): void {
    this.db.prepare("UPDATE eval_runs SET status = 'completed', finished_at = ? WHERE id = ? AND status = 'running'").run(Date.now(), runId);
  }

  /** A run with its scores, and its per-case results when asked. */
  run(evalId: string, runId: string, withResults: boolean): EvalRun | undefined {
    const row = this.db.prepare('SELECT * FROM eval_runs WHERE id = ? AND eval_id = ?').get(runId, evalId) as RunRow | undefined;
    return row && this.toRun(row, withResults);
  }

  /** The newest runs of an eval with their scores. */
  runs(evalId: string, limit: number): EvalRun[] {
    const rows = this.db.prepare('SELECT * FROM eval_runs WHERE eval_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?').all(evalId, limit) as RunRow[];
    return rows.map((r) => this.toRun(r, false));
  }

  private toRun(row: RunRow, withResults: boolean): EvalRun {
    const results = (this.db.prepare('SELECT * FROM eval_results WHERE run_id = ? ORDER BY model, case_index').all(row.id) as ResultRow[]).map(fromResult);
    const models = JSON.parse(row.models) as string[];
    return {
      id: row.id,
      evalId: row.eval_id,
      status: row.status,
      models,
      startedAt: new Date(row.started_at).toISOString(),
      finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
      scores: scoresOf(models, results),
      ...(withResults ? { results } : {}),
    };
  }
}
