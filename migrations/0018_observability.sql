-- The session a request belonged to (the client's X-Router-Session header, which also keeps it on one
-- account), so the request log can be read as conversations (GET /api/sessions). The index is partial:
-- rows without a session (most traffic) cost nothing extra to write.
ALTER TABLE usage_log ADD COLUMN session_id TEXT;
CREATE INDEX usage_log_session ON usage_log (session_id, ts) WHERE session_id IS NOT NULL;

-- Database maintenance router ran (VACUUM through POST /api/storage/vacuum), for GET /api/storage/health.
CREATE TABLE storage_maintenance (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL,              -- 'vacuum'
  at          INTEGER NOT NULL,           -- unix ms when it finished
  duration_ms REAL NOT NULL,
  bytes_before INTEGER NOT NULL,          -- database file size before and after
  bytes_after  INTEGER NOT NULL
);

-- What `router config-tool` changed in coding agents' settings files (the CLI reports each change to the
-- daemon: POST /api/cli-tools/logs), newest last.
CREATE TABLE cli_tool_changes (
  id          INTEGER PRIMARY KEY,
  at          INTEGER NOT NULL,           -- unix ms
  tool        TEXT NOT NULL,              -- claude-code, codex, ...
  action      TEXT NOT NULL,              -- 'apply' | 'undo'
  files       TEXT NOT NULL,              -- JSON array of {path, action: 'created'|'modified'|'restored'|'removed'}
  backup      TEXT,                       -- the backup folder of the change (apply) or the one restored (undo)
  key_id      TEXT,                       -- the API key made for the tool, when one was
  model       TEXT,
  base_url    TEXT
);
CREATE INDEX cli_tool_changes_at ON cli_tool_changes (at);
