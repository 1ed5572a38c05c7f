-- Routing combos: named groups of targets (`<provider>/<model>` or other combo names) with a strategy.

CREATE TABLE combos (
  id                TEXT PRIMARY KEY,            -- uuid
  name              TEXT NOT NULL UNIQUE,        -- addressed in the model field of proxy requests
  strategy          TEXT NOT NULL DEFAULT 'priority',
  models            TEXT NOT NULL DEFAULT '[]',  -- JSON array of {model, weight?}, in declared order
  target_timeout_ms INTEGER,                     -- per-target timeout; null = the daemon default
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);
