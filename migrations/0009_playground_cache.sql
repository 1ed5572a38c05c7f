-- Playground presets and the response cache (issue 7). See docs/playground.md and docs/cache.md.

-- Saved playground setups. A preset belongs to the API key that created it (api_key_id), or to the
-- dashboard when a session created it (api_key_id NULL); each owner sees only its own presets.
-- messages, parameters and tags are JSON (validated by the routes before they are stored).
CREATE TABLE playground_presets (
  id          TEXT PRIMARY KEY,
  api_key_id  TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  model       TEXT NOT NULL,
  system      TEXT NOT NULL DEFAULT '',
  messages    TEXT NOT NULL DEFAULT '[]',
  parameters  TEXT NOT NULL DEFAULT '{}',
  tags        TEXT NOT NULL DEFAULT '[]',
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX playground_presets_owner ON playground_presets (api_key_id, created_at);

-- Exact-match response cache. key is the sha256 of the normalized request plus its target; response is
-- the IR reply as JSON. Written behind from memory (the in-memory copy serves hits); expired and evicted
-- entries are deleted on the same background tick. An entry expires at created_at + the TTL setting.
CREATE TABLE response_cache (
  key           TEXT PRIMARY KEY,
  provider      TEXT NOT NULL,
  model         TEXT NOT NULL,
  response      TEXT NOT NULL,
  bytes         INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,  -- unix ms
  last_used_at  INTEGER NOT NULL,  -- unix ms, for LRU order after a restart
  hits          INTEGER NOT NULL DEFAULT 0
);

-- Per-key cache mode: 'off' (never cached), 'request' (only requests that opt in; the default when a key
-- has no row), 'always' (every eligible request unless it opts out).
CREATE TABLE cache_key_settings (
  api_key_id  TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  mode        TEXT NOT NULL CHECK (mode IN ('off', 'request', 'always')),
  updated_at  TEXT NOT NULL
);
