-- Evals (GET|POST /api/evals): a small prompt set with expected checks, run against models or combos
-- through the executor; each run keeps per-case results (pass/fail per check, latency, tokens, cost).
CREATE TABLE evals (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  models      TEXT NOT NULL,              -- JSON array: <provider>/<model> or combo names
  cases       TEXT NOT NULL,              -- JSON array of {name?, system?, prompt, checks: [{type, value?, ignoreCase?}]}
  max_tokens  INTEGER NOT NULL,
  concurrency INTEGER NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

CREATE TABLE eval_runs (
  id          TEXT PRIMARY KEY,
  eval_id     TEXT NOT NULL REFERENCES evals (id) ON DELETE CASCADE,
  status      TEXT NOT NULL,              -- running | completed | interrupted
  models      TEXT NOT NULL,              -- JSON array: the models this run asked
  started_at  INTEGER NOT NULL,           -- unix ms
  finished_at INTEGER
);
CREATE INDEX eval_runs_eval ON eval_runs (eval_id, started_at);

CREATE TABLE eval_results (
  run_id      TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
  model       TEXT NOT NULL,              -- as the eval names it
  case_index  INTEGER NOT NULL,
  passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
  checks      TEXT NOT NULL,              -- JSON array of {type, passed}
  output      TEXT,                       -- the reply text (capped)
  error       TEXT,                       -- why the call failed, when it did
  latency_ms  REAL NOT NULL,
  tokens_in   INTEGER NOT NULL DEFAULT 0,
  tokens_out  INTEGER NOT NULL DEFAULT 0,
  cost_usd    REAL NOT NULL DEFAULT 0,
  provider    TEXT,                       -- the provider that served it
  trace_id    TEXT,                       -- its request-log rows (endpoint eval:<eval id>)
  PRIMARY KEY (run_id, model, case_index)
);
