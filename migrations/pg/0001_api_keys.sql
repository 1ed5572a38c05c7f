-- PostgreSQL schema of cluster mode (migrations/pg/: numbered like migrations/, never edited once released).
-- Column types mirror the SQLite schema (ISO-8601 TEXT timestamps, INTEGER flags, TEXT JSON) so one storage
-- adapter and one row mapper serve both dialects.

CREATE TABLE api_keys (
  id                  TEXT PRIMARY KEY,
  name                TEXT NOT NULL,
  key_hash            TEXT NOT NULL UNIQUE,  -- sha256 of the whole key; the key itself is never stored
  masked_key          TEXT NOT NULL,
  scopes              TEXT NOT NULL DEFAULT '[]',  -- JSON array of scope strings
  is_active           INTEGER NOT NULL DEFAULT 1,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  last_used_at        TEXT,
  daily_request_limit INTEGER,
  token_limits        TEXT NOT NULL DEFAULT '[]'
);
