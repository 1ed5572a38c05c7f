-- Nonces of signed cloud-sync requests this router answered, kept while a request with that nonce could
-- still pass the 5-minute clock check: a replayed request is refused (sync/nonces.ts).
CREATE TABLE sync_nonces (
  nonce TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sync_nonces_expiry ON sync_nonces (expires_at);
