-- Agent Skills in cluster mode: a skill installed on one node is served by every node. One machine keeps
-- them as folders under <state>/skills/ (no SQLite table: skills/disk-repository.ts). A row per skill (its
-- instructions, the sorted file list as JSON, total bytes, the API key ids as JSON) and a row per file.
CREATE TABLE skills (
  name        TEXT PRIMARY KEY,
  description TEXT NOT NULL,
  body        TEXT NOT NULL,              -- SKILL.md after its front matter
  files       TEXT NOT NULL,              -- JSON array of relative paths
  bytes       INTEGER NOT NULL,
  keys        TEXT NOT NULL DEFAULT '[]', -- JSON array of API key ids
  updated_at  TEXT NOT NULL
);

CREATE TABLE skill_files (
  skill       TEXT NOT NULL REFERENCES skills (name) ON DELETE CASCADE,
  path        TEXT NOT NULL,
  data        BYTEA NOT NULL,
  bytes       INTEGER NOT NULL,
  PRIMARY KEY (skill, path)
);
