-- Guardrails (see src/daemon/guardrails/ and docs/guardrails.md).
-- The global configuration is one JSON document (detector modes and settings, validated by the daemon's
-- schema on read; a row that no longer validates falls back to the defaults). Per-key overrides are
-- partial documents of the same shape, merged over the global one for requests made with that key.

CREATE TABLE guardrail_config (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  config     TEXT NOT NULL,  -- JSON
  updated_at TEXT NOT NULL
);

CREATE TABLE guardrail_key_overrides (
  api_key_id TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  config     TEXT NOT NULL,  -- JSON, partial
  updated_at TEXT NOT NULL
);
