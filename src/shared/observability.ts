/** Wire types of the observability routes the CLI reads too (`/api/cli-tools/logs`, `/api/evals`). */

/** A file `router config-tool` touched, and how. */
export interface CliToolFileChange {
  path: string;
  action: 'created' | 'modified' | 'restored' | 'removed';
}

/** `POST /api/cli-tools/logs`: what the CLI reports after writing (apply) or restoring (undo) a tool's settings. */
export interface CliToolChangeInput {
  tool: string;
  action: 'apply' | 'undo';
  files: CliToolFileChange[];
  /** The backup folder holding the files as they were (apply), or the one restored from (undo). */
  backup?: string | null;
  /** The API key created for the tool, when one was. */
  keyId?: string | null;
  model?: string | null;
  baseUrl?: string | null;
}

/** One recorded change (`GET /api/cli-tools/logs`). */
export interface CliToolChange extends Required<CliToolChangeInput> {
  id: number;
  /** When the daemon recorded it (ISO 8601). */
  at: string;
}

/** One expectation on a reply. */
export type EvalCheck =
  | { type: 'contains' | 'not-contains'; value: string; ignoreCase?: boolean }
  | { type: 'equals'; value: string; ignoreCase?: boolean }
  | { type: 'regex'; value: string; flags?: string }
  | { type: 'json-valid' };

/** One prompt of an eval and what its reply must satisfy. */
export interface EvalCase {
  name?: string;
  system?: string;
  prompt: string;
  checks: EvalCheck[];
}

/** A stored eval (`GET /api/evals/{id}` adds its runs). */
export interface EvalRecord {
  id: string;
  name: string;
  description: string;
  models: string[];
  cases: EvalCase[];
  maxTokens: number;
  concurrency: number;
  createdAt: string;
  updatedAt: string;
}

/** A model's figures in one run. */
export interface EvalModelScore {
  model: string;
  cases: number;
  passed: number;
  /** passed / cases, 0..1. */
  score: number;
  /** Calls that failed (no reply to check). */
  errors: number;
  avgLatencyMs: number | null;
  p50LatencyMs: number | null;
  tokensIn: number;
  tokensOut: number;
  /** Sum over the priced cases; cases of a model with no known price are counted in unpricedRequests, not as $0. */
  costUsd: number;
  /** Cases answered by a model with no known price (their cost is unknown). */
  unpricedRequests: number;
}

/** One case's outcome for one model. */
export interface EvalCaseResult {
  model: string;
  caseIndex: number;
  passed: boolean;
  checks: Array<{ type: EvalCheck['type']; passed: boolean }>;
  output: string | null;
  error: string | null;
  latencyMs: number;
  tokensIn: number;
  tokensOut: number;
  /** USD; null when no price is known for the model that answered (unpriced, never a made-up 0). */
  costUsd: number | null;
  provider: string | null;
  traceId: string | null;
}

/** One run of an eval. */
export interface EvalRun {
  id: string;
  evalId: string;
  status: 'running' | 'completed' | 'interrupted';
  models: string[];
  startedAt: string;
  finishedAt: string | null;
  scores: EvalModelScore[];
  /** Per-case results (`GET /api/evals/{id}/runs/{runId}` and a waited run only). */
  results?: EvalCaseResult[];
}
