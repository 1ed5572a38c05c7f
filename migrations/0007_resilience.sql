-- Resilience state that must survive a restart: circuit breakers and cooldowns, stored as JSON snapshots
-- written behind (every few seconds when changed, and at shutdown). Expired entries are dropped on load.

CREATE TABLE resilience_state (
  kind       TEXT PRIMARY KEY CHECK (kind IN ('breakers', 'cooldowns')),
  data       TEXT NOT NULL,  -- JSON array
  updated_at TEXT NOT NULL
);
