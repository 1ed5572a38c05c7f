-- Request hooks (see src/daemon/hooks/ and docs/operations.md "Request hooks"): user-defined rules declared
-- as data (a match on route, model, provider and API key; actions from a fixed set), applied by the proxy
-- in `position` order, then creation order. The definition is one JSON document validated by the daemon's
-- schema on read (a row that no longer validates is skipped and logged, never applied).

CREATE TABLE middleware_hooks (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  position   INTEGER NOT NULL DEFAULT 100,
  enabled    INTEGER NOT NULL DEFAULT 1,
  definition TEXT NOT NULL,  -- JSON: {match, actions}
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
