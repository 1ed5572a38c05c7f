-- Expiry of Batch API files (OpenAI's `expires_after` on upload; src/daemon/batches/files.ts, docs/batch.md):
-- unix seconds after which the file is deleted, NULL for files that never expire (router's own outputs).
ALTER TABLE batch_files ADD COLUMN expires_at INTEGER;
CREATE INDEX batch_files_expiry ON batch_files (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX batch_files_owner ON batch_files (key_id);
