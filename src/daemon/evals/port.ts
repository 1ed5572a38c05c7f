import type { EvalCaseResult, EvalRecord } from '../../shared/observability.js';

/** A run as stored: its results are read apart (`results`). */
export interface StoredRun {
  id: string;
  evalId: string;
  status: 'running' | 'completed' | 'interrupted';
  models: string[];
  /** Unix ms. */
  startedAt: number;
  finishedAt: number | null;
  /** The node running it (null on runs recorded before cluster mode). */
  nodeId: string | null;
}

/**
 * The evals module's storage port: definitions (`evals`), runs (`eval_runs`) and per-case results
 * (`eval_results`). No snapshot: only the eval routes and the node running a run read them. Shared rows in
 * cluster mode, so a run started on one node is listed on every node while the node running it writes its
 * results. Implemented over SQLite and PostgreSQL by `SqlEvalRepository` (test/evals/port.test.ts).
 */
export interface EvalRepository {
  /** Every eval, newest first. */
  list(): Promise<EvalRecord[]>;
  /** By id or by name. */
  get(idOrName: string): Promise<EvalRecord | undefined>;
  /** False when the name is taken (names are unique). */
  insert(rec: EvalRecord): Promise<boolean>;
  /** Deletes the eval, its runs and their results; false when there was no such eval. */
  remove(id: string): Promise<boolean>;
  insertRun(run: StoredRun): Promise<void>;
  /** One result of a run (a case of a model); written once. */
  addResult(runId: string, result: EvalCaseResult): Promise<void>;
  /** Marks a running run completed (or interrupted) at `at`; false when it was not running. */
  finishRun(runId: string, status: 'completed' | 'interrupted', at: number): Promise<boolean>;
  /** Marks every run still `running` on this node (or on no node: older rows) interrupted; returns how many. */
  interruptRunsOf(nodeId: string, at: number): Promise<number>;
  getRun(evalId: string, runId: string): Promise<StoredRun | undefined>;
  /** The newest runs of an eval. */
  runs(evalId: string, limit: number): Promise<StoredRun[]>;
  /** The newest run of each of these evals. */
  latestRuns(evalIds: readonly string[]): Promise<Map<string, StoredRun>>;
  /** A run still running (on any node) of this eval, if any. */
  runningRun(evalId: string): Promise<StoredRun | undefined>;
  /** The results of these runs, ordered by model and case. */
  results(runIds: readonly string[]): Promise<Map<string, EvalCaseResult[]>>;
}
