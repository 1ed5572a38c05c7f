-- Providers (SQLite: 0003_providers.sql, 0013_node_completions.sql, 0016_node_rerank_format.sql,
-- 0023_node_token_limit.sql): custom provider nodes, connections (accounts) with their credentials sealed
-- (AES-256-GCM with the cluster's shared key, bound to the connection id), models synced from upstreams.
-- ISO-8601 TEXT times, INTEGER flags, TEXT JSON.
CREATE TABLE provider_nodes (
  id                TEXT PRIMARY KEY,
  name              TEXT NOT NULL,
  prefix            TEXT NOT NULL UNIQUE,
  type              TEXT NOT NULL CHECK (type IN ('openai-compatible', 'anthropic-compatible')),
  base_url          TEXT NOT NULL,
  api_type          TEXT NOT NULL DEFAULT 'chat' CHECK (api_type IN ('chat', 'responses')),
  custom_headers    TEXT NOT NULL DEFAULT '{}',
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  completions       INTEGER NOT NULL DEFAULT 1,
  rerank_format     TEXT NOT NULL DEFAULT 'cohere',
  token_limit_field TEXT NOT NULL DEFAULT 'auto'
);

CREATE TABLE provider_connections (
  id                     TEXT PRIMARY KEY,
  provider               TEXT NOT NULL,
  name                   TEXT NOT NULL,
  auth_kind              TEXT NOT NULL CHECK (auth_kind IN ('api-key', 'oauth', 'web-session', 'none')),
  secrets_enc            TEXT,
  expires_at             TEXT,
  priority               INTEGER NOT NULL DEFAULT 100,
  provider_specific_data TEXT NOT NULL DEFAULT '{}',
  is_active              INTEGER NOT NULL DEFAULT 1,
  test_status            TEXT,
  last_error             TEXT,
  last_tested_at         TEXT,
  created_at             TEXT NOT NULL,
  updated_at             TEXT NOT NULL
);
CREATE INDEX provider_connections_provider ON provider_connections (provider, priority);

CREATE TABLE provider_models (
  provider       TEXT NOT NULL,
  model_id       TEXT NOT NULL,
  context_length INTEGER,
  synced_at      TEXT NOT NULL,
  PRIMARY KEY (provider, model_id)
);
