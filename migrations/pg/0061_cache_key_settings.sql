-- Per-key response-cache mode (SQLite: 0009_playground_cache.sql): 'off', 'request' (the default when a key
-- has no row), 'always'; ISO-8601 TEXT time of the last write. The cached replies themselves
-- (response_cache) stay in each node's own file (docs/storage.md).
CREATE TABLE cache_key_settings (
  api_key_id  TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  mode        TEXT NOT NULL CHECK (mode IN ('off', 'request', 'always')),
  updated_at  TEXT NOT NULL
);
