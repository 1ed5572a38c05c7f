-- Webhooks: outbound event receivers. The secret is stored encrypted (AES-256-GCM with the state folder's
-- secret.key) because delivery needs the plain secret to sign each body with HMAC-SHA256.

CREATE TABLE webhooks (
  id                TEXT PRIMARY KEY,             -- uuid
  url               TEXT NOT NULL,                -- destination URL; for kind telegram a chat id
  kind              TEXT NOT NULL DEFAULT 'custom' CHECK (kind IN ('custom', 'slack', 'discord', 'telegram')),
  events            TEXT NOT NULL DEFAULT '["*"]', -- JSON array of event names or "*"
  secret_enc        TEXT NOT NULL,                -- encrypted secret (see src/daemon/store/secrets.ts)
  enabled           INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  description       TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  last_triggered_at TEXT,
  last_status       INTEGER,                      -- HTTP status of the last attempt; 0 = network error
  failure_count     INTEGER NOT NULL DEFAULT 0
);
