import type { EvalCaseResult, EvalRecord } from '../../shared/observability.js';
import type { SqlDialect, SqlDriver } from '../store/driver.js';
import type { EvalRepository, StoredRun } from './port.js';

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
  status: StoredRun['status'];
  models: string;
  started_at: number;
  finished_at: number | null;
  /** PostgreSQL only. */
  node_id?: string | null;
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

const EVAL_COLUMNS = 'id, name, description, models, cases, max_tokens, concurrency, created_at, updated_at';
/** SQLite's table has no node_id (one machine: every run is this node's); PostgreSQL's has (pg/0070_evals.sql). */
const runColumns = (d: SqlDialect) => `id, eval_id, status, models, started_at, finished_at${d === 'postgres' ? ', node_id' : ''}`;
const RESULT_COLUMNS = 'run_id, model, case_index, passed, checks, output, error, latency_ms, tokens_in, tokens_out, cost_usd, cost_source, provider, trace_id';
/** Ids per IN list (well under both dialects' placeholder limits). */
const CHUNK = 500;

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

const fromRun = (r: RunRow): StoredRun => ({
  id: r.id,
  evalId: r.eval_id,
  status: r.status,
  models: JSON.parse(r.models) as string[],
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  nodeId: r.node_id ?? null,
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

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * The evals port over the driver seam: one SQL text for SQLite and PostgreSQL, but for the run's node, a
 * column only the shared database has (as usage_log's row_uid): on one machine every run is this node's.
 */
export class SqlEvalRepository implements EvalRepository {
  private readonly runCols: string;

  constructor(private readonly driver: SqlDriver) {
    this.runCols = runColumns(driver.dialect);
  }

  async list(): Promise<EvalRecord[]> {
    return (await this.driver.query<EvalRow>(`SELECT ${EVAL_COLUMNS} FROM evals ORDER BY created_at DESC, rowid DESC`)).map(fromEval);
  }

  async get(idOrName: string): Promise<EvalRecord | undefined> {
    // An id match wins over a name match (a name may look like another eval's id).
    const rows = await this.driver.query<EvalRow>(`SELECT ${EVAL_COLUMNS} FROM evals WHERE id = ? OR name = ?`, [idOrName, idOrName]);
    const row = rows.find((r) => r.id === idOrName) ?? rows[0];
    return row && fromEval(row);
  }

  async insert(rec: EvalRecord): Promise<boolean> {
    const { changes } = await this.driver.run(
      `INSERT INTO evals (${EVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
      [rec.id, rec.name, rec.description, JSON.stringify(rec.models), JSON.stringify(rec.cases), rec.maxTokens, rec.concurrency, rec.createdAt, rec.updatedAt],
    );
    return changes > 0;
  }

  async remove(id: string): Promise<boolean> {
    // Children first: SQLite enforces ON DELETE CASCADE only with foreign keys on; this works either way.
    return this.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM eval_results WHERE run_id IN (SELECT id FROM eval_runs WHERE eval_id = ?)', [id]);
      await tx.run('DELETE FROM eval_runs WHERE eval_id = ?', [id]);
      return (await tx.run('DELETE FROM evals WHERE id = ?', [id])).changes > 0;
    });
  }

  async insertRun(run: StoredRun): Promise<void> {
    const values = [run.id, run.evalId, run.status, JSON.stringify(run.models), run.startedAt, run.finishedAt];
    if (this.driver.dialect === 'postgres') values.push(run.nodeId);
    await this.driver.run(`INSERT INTO eval_runs (${this.runCols}) VALUES (${values.map(() => '?').join(', ')})`, values);
  }

  async addResult(runId: string, r: EvalCaseResult): Promise<void> {
    await this.driver.run(`INSERT INTO eval_results (${RESULT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      runId,
      r.model,
      r.caseIndex,
      r.passed ? 1 : 0,
      JSON.stringify(r.checks),
      r.output,
      r.error,
      r.latencyMs,
      r.tokensIn,
      r.tokensOut,
      r.costUsd ?? 0,
      r.costUsd === null ? 'unpriced' : 'computed',
      r.provider,
      r.traceId,
    ]);
  }

  async finishRun(runId: string, status: 'completed' | 'interrupted', at: number): Promise<boolean> {
    const { changes } = await this.driver.run("UPDATE eval_runs SET status = ?, finished_at = ? WHERE id = ? AND status = 'running'", [status, at, runId]);
    return changes > 0;
  }

  async interruptRunsOf(nodeId: string, at: number): Promise<number> {
    // One machine: every unfinished run was this node's. A cluster: this node's, and runs copied from a single
    // machine (router cluster migrate) that no node owns.
    const { changes } =
      this.driver.dialect === 'postgres'
        ? await this.driver.run("UPDATE eval_runs SET status = 'interrupted', finished_at = ? WHERE status = 'running' AND (node_id = ? OR node_id IS NULL)", [at, nodeId])
        : await this.driver.run("UPDATE eval_runs SET status = 'interrupted', finished_at = ? WHERE status = 'running'", [at]);
    return changes;
  }

  async getRun(evalId: string, runId: string): Promise<StoredRun | undefined> {
    const [row] = await this.driver.query<RunRow>(`SELECT ${this.runCols} FROM eval_runs WHERE id = ? AND eval_id = ?`, [runId, evalId]);
    return row && fromRun(row);
  }

  async runs(evalId: string, limit: number): Promise<StoredRun[]> {
    const rows = await this.driver.query<RunRow>(`SELECT ${this.runCols} FROM eval_runs WHERE eval_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?`, [evalId, limit]);
    return rows.map(fromRun);
  }

  async latestRuns(evalIds: readonly string[]): Promise<Map<string, StoredRun>> {
    const out = new Map<string, StoredRun>();
    for (const ids of chunks(evalIds)) {
      const rows = await this.driver.query<RunRow>(
        `SELECT ${this.runCols} FROM (
           SELECT ${this.runCols}, ROW_NUMBER() OVER (PARTITION BY eval_id ORDER BY started_at DESC, rowid DESC) AS n
           FROM eval_runs WHERE eval_id IN (${marks(ids.length)})
         ) latest WHERE n = 1`,
        ids,
      );
      for (const r of rows) out.set(r.eval_id, fromRun(r));
    }
    return out;
  }

  async runningRun(evalId: string): Promise<StoredRun | undefined> {
    const [row] = await this.driver.query<RunRow>(
      `SELECT ${this.runCols} FROM eval_runs WHERE eval_id = ? AND status = 'running' ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      [evalId],
    );
    return row && fromRun(row);
  }

  async results(runIds: readonly string[]): Promise<Map<string, EvalCaseResult[]>> {
    const out = new Map<string, EvalCaseResult[]>(runIds.map((id) => [id, []]));
    for (const ids of chunks(runIds)) {
      const rows = await this.driver.query<ResultRow>(`SELECT ${RESULT_COLUMNS} FROM eval_results WHERE run_id IN (${marks(ids.length)})`, ids);
      for (const r of rows) out.get(r.run_id)?.push(fromResult(r));
    }
    // Sorted here: PostgreSQL's text collation may order model names unlike SQLite's byte order.
    for (const list of out.values()) list.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : a.caseIndex - b.caseIndex));
    return out;
  }
}
