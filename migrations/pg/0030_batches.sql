-- Batch API in cluster mode (src/daemon/batches/, docs/batch.md "Cluster mode"). The first three tables mirror
-- SQLite's migrations/0017_batches.sql and 0025_file_expiry.sql column for column (unix-second INTEGER times
-- as BIGINT, JSON as TEXT). SQLite pages its lists by the implicit rowid; these tables carry an identity
-- column of the same name, so one SQL text serves both (batches/sql-repository.ts).

CREATE TABLE batch_files (
  rowid      BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id         TEXT PRIMARY KEY,
  key_id     TEXT,
  purpose    TEXT NOT NULL,
  filename   TEXT NOT NULL,
  bytes      BIGINT NOT NULL,
  lines      INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  expires_at BIGINT
);
CREATE INDEX batch_files_expiry ON batch_files (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX batch_files_owner ON batch_files (key_id);

CREATE TABLE batches (
  rowid             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id                TEXT PRIMARY KEY,
  key_id            TEXT,
  endpoint          TEXT NOT NULL,
  input_file_id     TEXT NOT NULL,
  completion_window TEXT NOT NULL,
  mode              TEXT NOT NULL,
  status            TEXT NOT NULL,
  metadata          TEXT,
  total             INTEGER NOT NULL DEFAULT 0,
  completed         INTEGER NOT NULL DEFAULT 0,
  failed            INTEGER NOT NULL DEFAULT 0,
  output_file_id    TEXT,
  error_file_id     TEXT,
  errors            TEXT,
  native            TEXT,
  created_at        BIGINT NOT NULL,
  in_progress_at    BIGINT,
  expires_at        BIGINT,
  finalizing_at     BIGINT,
  completed_at      BIGINT,
  failed_at         BIGINT,
  expired_at        BIGINT,
  cancelling_at     BIGINT,
  cancelled_at      BIGINT
);
CREATE INDEX batches_status ON batches (status);

CREATE TABLE batch_lines (
  batch_id TEXT NOT NULL,
  line     INTEGER NOT NULL,
  ok       INTEGER NOT NULL,
  result   TEXT NOT NULL,
  PRIMARY KEY (batch_id, line)
);

-- Cluster only (one machine keeps file contents under the state folder and runs every batch itself):
-- file contents in 1 MiB chunks, readable by every node (batches/contents.ts SqlFileContents) ...
CREATE TABLE batch_file_chunks (
  file_id    TEXT NOT NULL,
  seq        INTEGER NOT NULL,   -- 0-based chunk number
  data       BYTEA NOT NULL,
  created_at BIGINT NOT NULL,    -- unix seconds: chunks of an upload that never finished are swept after a day
  PRIMARY KEY (file_id, seq)
);

-- ... and which node runs each unfinished batch, until when (batches/leases.ts SqlBatchLeases).
CREATE TABLE batch_leases (
  batch_id TEXT PRIMARY KEY,
  node_id  TEXT NOT NULL,
  until    TEXT NOT NULL         -- ISO-8601: renewed while the batch runs; past it (plus a grace) another node takes over
);
