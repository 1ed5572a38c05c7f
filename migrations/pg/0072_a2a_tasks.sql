-- A2A tasks (SQLite 0015_agent_surfaces.sql), mirrored for cluster mode: a task created on one node is read
-- (tasks/get, tasks/list) and canceled (tasks/cancel) on any. The whole task as the A2A SDK's JSON, plus
-- columns to list it by; times in unix ms.
CREATE TABLE a2a_tasks (
  id          TEXT PRIMARY KEY,
  context_id  TEXT NOT NULL,
  state       TEXT NOT NULL,
  owner       TEXT NOT NULL,             -- the caller that created it (key:<id>, session, cli, loopback)
  task        TEXT NOT NULL,             -- JSON
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE INDEX a2a_tasks_updated ON a2a_tasks (updated_at);
