-- Provider connections (accounts), custom provider nodes, and models synced from upstreams.

CREATE TABLE provider_nodes (
  id             TEXT PRIMARY KEY,            -- uuid
  name           TEXT NOT NULL,
  prefix         TEXT NOT NULL UNIQUE,        -- models are addressed <prefix>/<model>
  type           TEXT NOT NULL CHECK (type IN ('openai-compatible', 'anthropic-compatible')),
  base_url       TEXT NOT NULL,
  api_type       TEXT NOT NULL DEFAULT 'chat' CHECK (api_type IN ('chat', 'responses')),
  custom_headers TEXT NOT NULL DEFAULT '{}',  -- JSON object
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE provider_connections (
  id                     TEXT PRIMARY KEY,   -- uuid
  provider               TEXT NOT NULL,      -- built-in provider id or provider node id
  name                   TEXT NOT NULL,
  auth_kind              TEXT NOT NULL CHECK (auth_kind IN ('api-key', 'oauth', 'web-session', 'none')),
  secrets_enc            TEXT,               -- encrypted JSON {apiKey?, accessToken?, refreshToken?, cookie?}
  expires_at             TEXT,               -- OAuth access-token expiry
  priority               INTEGER NOT NULL DEFAULT 100,
  provider_specific_data TEXT NOT NULL DEFAULT '{}',
  is_active              INTEGER NOT NULL DEFAULT 1,
  test_status            TEXT,               -- ok | error | expired | null (never tested)
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
