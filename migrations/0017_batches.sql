-- Batch API (OpenAI's shape; src/daemon/batches/, docs/batch.md). Uploaded and produced files live under the
-- state folder's `files/` (never as blobs here); this holds their metadata. A batch's progress is one row per
-- finished input line (its output or error line as written to the result files), committed as each line ends,
-- so a restart resumes with the lines that have no row and never sends a finished line again.

CREATE TABLE batch_files (
  id         TEXT PRIMARY KEY,     -- file-<hex>
  key_id     TEXT,                 -- the API key that owns it; NULL for the dashboard, the CLI, or router's own files
  purpose    TEXT NOT NULL,        -- batch | batch_output
  filename   TEXT NOT NULL,
  bytes      INTEGER NOT NULL,
  lines      INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL      -- unix seconds
);

CREATE TABLE batches (
  id                TEXT PRIMARY KEY,  -- batch_<hex>
  key_id            TEXT,
  endpoint          TEXT NOT NULL,
  input_file_id     TEXT NOT NULL,
  completion_window TEXT NOT NULL,
  mode              TEXT NOT NULL,     -- local | native
  status            TEXT NOT NULL,     -- validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled
  metadata          TEXT,              -- JSON object or NULL
  total             INTEGER NOT NULL DEFAULT 0,
  completed         INTEGER NOT NULL DEFAULT 0,
  failed            INTEGER NOT NULL DEFAULT 0,
  output_file_id    TEXT,
  error_file_id     TEXT,
  errors            TEXT,              -- JSON: [{code, message, line?}] when the batch itself failed
  native            TEXT,              -- JSON: the provider batch of native mode {provider, connectionId, model, remoteId, ...}
  created_at        INTEGER NOT NULL,
  in_progress_at    INTEGER,
  expires_at        INTEGER,
  finalizing_at     INTEGER,
  completed_at      INTEGER,
  failed_at         INTEGER,
  expired_at        INTEGER,
  cancelling_at     INTEGER,
  cancelled_at      INTEGER
);
CREATE INDEX batches_status ON batches(status);

CREATE TABLE batch_lines (
  batch_id TEXT NOT NULL,
  line     INTEGER NOT NULL,   -- 0-based line of the input file
  ok       INTEGER NOT NULL,   -- 1: goes to the output file, 0: to the error file
  result   TEXT NOT NULL,      -- the result line (JSON), exactly as written to that file
  PRIMARY KEY (batch_id, line)
) WITHOUT ROWID;
