import { randomUUID } from 'node:crypto';
import type { EvalCaseResult, EvalModelScore, EvalRecord, EvalRun } from '../../shared/observability.js';
import type { EvalRepository, StoredRun } from './port.js';
import type { EvalBody } from './schema.js';

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

/**
 * Evals, their runs and per-case results, through the evals port (docs/storage.md). A run belongs to the
 * node that started it (`nodeId`): that node writes its results; every node reads them.
 */
export class EvalStore {
  private constructor(
    private readonly repo: EvalRepository,
    private readonly nodeId: string,
  ) {}

  /** Runs this node left unfinished when it stopped will never finish: they are marked interrupted. */
  static async create(repo: EvalRepository, nodeId: string): Promise<EvalStore> {
    await repo.interruptRunsOf(nodeId, Date.now());
    return new EvalStore(repo, nodeId);
  }

  list(): Promise<EvalRecord[]> {
    return this.repo.list();
  }

  get(idOrName: string): Promise<EvalRecord | undefined> {
    return this.repo.get(idOrName);
  }

  /** Creates an eval; undefined when the name is taken. */
  async add(body: EvalBody): Promise<EvalRecord | undefined> {
    const now = new Date().toISOString();
    const rec: EvalRecord = {
      id: randomUUID(),
      name: body.name,
      description: body.description,
      models: body.models,
      cases: body.cases,
      maxTokens: body.maxTokens,
      concurrency: body.concurrency,
      createdAt: now,
      updatedAt: now,
    };
    return (await this.repo.insert(rec)) ? rec : undefined;
  }

  delete(id: string): Promise<boolean> {
    return this.repo.remove(id);
  }

  async startRun(evalId: string, models: readonly string[]): Promise<EvalRun> {
    const run: StoredRun = { id: randomUUID(), evalId, status: 'running', models: [...models], startedAt: Date.now(), finishedAt: null, nodeId: this.nodeId };
    await this.repo.insertRun(run);
    return toRun(run, [], false);
  }

  addResult(runId: string, r: EvalCaseResult): Promise<void> {
    return this.repo.addResult(runId, r);
  }

  /** Ends a run: `completed` when every call ended, `interrupted` when its results could not be stored. */
  async finishRun(runId: string, status: 'completed' | 'interrupted' = 'completed'): Promise<void> {
    await this.repo.finishRun(runId, status, Date.now());
  }

  /** Whether a run of this eval is in progress on any node. */
  async isRunning(evalId: string): Promise<boolean> {
    return (await this.repo.runningRun(evalId)) !== undefined;
  }

  /** A run with its scores, and its per-case results when asked. */
  async run(evalId: string, runId: string, withResults: boolean): Promise<EvalRun | undefined> {
    const row = await this.repo.getRun(evalId, runId);
    if (!row) return undefined;
    const results = await this.repo.results([row.id]);
    return toRun(row, results.get(row.id) ?? [], withResults);
  }

  /** The newest runs of an eval with their scores. */
  async runs(evalId: string, limit: number): Promise<EvalRun[]> {
    return this.withScores(await this.repo.runs(evalId, limit));
  }

  /** The newest run of each eval with its scores (null for an eval never run). */
  async latestRuns(evalIds: readonly string[]): Promise<Map<string, EvalRun>> {
    const latest = await this.repo.latestRuns(evalIds);
    const runs = await this.withScores([...latest.values()]);
    return new Map(runs.map((r) => [r.evalId, r]));
  }

  private async withScores(rows: StoredRun[]): Promise<EvalRun[]> {
    const results = await this.repo.results(rows.map((r) => r.id));
    return rows.map((r) => toRun(r, results.get(r.id) ?? [], false));
  }
}

function toRun(row: StoredRun, results: EvalCaseResult[], withResults: boolean): EvalRun {
  return {
    id: row.id,
    evalId: row.evalId,
    status: row.status,
    models: row.models,
    startedAt: new Date(row.startedAt).toISOString(),
    finishedAt: row.finishedAt === null ? null : new Date(row.finishedAt).toISOString(),
    scores: scoresOf(row.models, results),
    ...(withResults ? { results } : {}),
  };
}
