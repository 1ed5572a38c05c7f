-- Agent surfaces (docs/agents.md): the MCP server's audit log and the A2A agent's tasks.

-- One row per MCP tool call (and per tool the assistant ran): who, which tool, the size and sha256 of its
-- arguments (never the arguments themselves), how long it took and whether it succeeded.
CREATE TABLE mcp_audit (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  ts          INTEGER NOT NULL,          -- unix ms when the call started
  caller      TEXT NOT NULL,             -- key:<id>, session, cli, loopback
  key_id      TEXT,
  transport   TEXT NOT NULL,             -- stream, sse, assistant
  session_id  TEXT,
  tool        TEXT NOT NULL,
  arg_bytes   INTEGER NOT NULL,
  arg_sha256  TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  ok          INTEGER NOT NULL,
  error       TEXT
);
CREATE INDEX mcp_audit_ts ON mcp_audit (ts);
CREATE INDEX mcp_audit_tool_ts ON mcp_audit (tool, ts);

-- A2A tasks: the whole task (status, history, artifacts) as the A2A SDK's JSON, plus columns to list them.
CREATE TABLE a2a_tasks (
  id          TEXT PRIMARY KEY,
  context_id  TEXT NOT NULL,
  state       TEXT NOT NULL,
  owner       TEXT NOT NULL,             -- the caller that created it (key:<id>, session, cli, loopback)
  task        TEXT NOT NULL,             -- JSON
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX a2a_tasks_updated ON a2a_tasks (updated_at);
