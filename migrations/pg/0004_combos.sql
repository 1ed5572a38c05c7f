-- Routing combos (SQLite: 0005_combos.sql, 0024_routing_affinity.sql, 0027_routing_recovery.sql): named
-- groups of targets with a strategy; models as JSON text, ISO-8601 TEXT times, INTEGER flags.
CREATE TABLE combos (
  id                  TEXT PRIMARY KEY,
  name                TEXT NOT NULL UNIQUE,
  strategy            TEXT NOT NULL DEFAULT 'priority',
  models              TEXT NOT NULL DEFAULT '[]',
  target_timeout_ms   INTEGER,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  affinity            TEXT NOT NULL DEFAULT 'off',
  hedge_after_ms      INTEGER,
  mid_stream_recovery TEXT,
  context_fit         INTEGER NOT NULL DEFAULT 0
);
