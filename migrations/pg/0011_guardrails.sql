-- Guardrails (SQLite 0010), mirrored for cluster mode: the global configuration (one JSON document, row 1)
-- and per-key overrides (partial documents of the same shape), validated by the daemon on load.
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
