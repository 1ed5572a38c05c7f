-- Seen nonces of signed cloud-sync requests (SQLite: 0021_sync_nonces.sql), shared so that a nonce answered
-- by one node is refused by every node; expires_at in epoch milliseconds (BIGINT: SQLite's INTEGER is 64-bit).
CREATE TABLE sync_nonces (
  nonce      TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL
);
CREATE INDEX sync_nonces_expiry ON sync_nonces (expires_at);
