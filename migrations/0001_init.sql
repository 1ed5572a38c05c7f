-- Foundation: API keys, settings, dashboard sessions and the dashboard password.

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  key_hash     TEXT NOT NULL UNIQUE,  -- sha256 of the whole key; the key itself is never stored
  masked_key   TEXT NOT NULL,
  scopes       TEXT NOT NULL DEFAULT '[]',  -- JSON array of scope strings
  is_active    INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  last_used_at TEXT
);

CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,  -- JSON
  updated_at TEXT NOT NULL
);

CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,  -- sha256 of the cookie value
  created_at TEXT NOT NULL,
  expires_at INTEGER NOT NULL   -- unix ms
);

CREATE TABLE auth_password (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  hash       TEXT NOT NULL,  -- scrypt$N$r$p$salt$hash
  updated_at TEXT NOT NULL
);
