-- Usage tracking and pricing: one row per proxied attempt (request log, analytics, cost), and the user's
-- price overrides. The shipped default prices live in code (src/daemon/usage/pricing.ts); a row here
-- replaces the default for its provider and model until it is deleted.

CREATE TABLE usage_log (
  id                 INTEGER PRIMARY KEY,          -- rowid: monotonic, the request log's paging cursor
  ts                 INTEGER NOT NULL,             -- unix ms when the attempt finished
  trace_id           TEXT NOT NULL,                -- shared by every attempt of one client request
  api_key_id         TEXT,                         -- null for dashboard-session callers
  endpoint           TEXT NOT NULL,                -- client route, e.g. /v1/chat/completions
  client_format      TEXT,                         -- openai-chat, anthropic, openai-responses, gemini...
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,                -- the upstream model id (no provider prefix)
  requested_model    TEXT,                         -- what the client named: <provider>/<model> or a combo
  connection_id      TEXT,
  combo              TEXT,
  status             INTEGER NOT NULL,             -- HTTP status of the attempt
  latency_ms         REAL NOT NULL,                -- request start to attempt end (streams: last byte)
  upstream_ms        REAL,                         -- time spent waiting on the upstream
  tokens_in          INTEGER NOT NULL DEFAULT 0,   -- includes cache reads and cache writes
  tokens_out         INTEGER NOT NULL DEFAULT 0,   -- includes reasoning tokens
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
  cost_usd           REAL NOT NULL DEFAULT 0,
  streamed           INTEGER NOT NULL DEFAULT 0 CHECK (streamed IN (0, 1)),
  estimated          INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1)), -- tokens counted by the router
  finish_reason      TEXT,
  error              TEXT,
  user_agent         TEXT,                         -- sanitized, at most 256 characters
  forwarded_for      TEXT                          -- sanitized, at most 256 characters
);
CREATE INDEX usage_log_ts ON usage_log (ts);
CREATE INDEX usage_log_provider_ts ON usage_log (provider, ts);
CREATE INDEX usage_log_model_ts ON usage_log (model, ts);
CREATE INDEX usage_log_key_ts ON usage_log (api_key_id, ts);
CREATE INDEX usage_log_trace ON usage_log (trace_id);

CREATE TABLE pricing_overrides (
  provider    TEXT NOT NULL,
  model       TEXT NOT NULL,
  input       REAL NOT NULL,  -- USD per million tokens
  output      REAL NOT NULL,
  cache_read  REAL,           -- null: billed at the input rate
  cache_write REAL,           -- null: billed at the input rate
  reasoning   REAL,           -- null: billed at the output rate
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (provider, model)
);
