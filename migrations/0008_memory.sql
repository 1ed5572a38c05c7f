-- Memory engine: entries, their FTS5 index (kept in sync by triggers), the engine's meta record (active
-- embedding signature) and its settings. The sqlite-vec vec0 table is created at run time by the engine,
-- because its column width is the active embedding model's dimension count (vec0 rowid = memories.seq).

CREATE TABLE memories (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT, -- FTS5 content rowid and vec0 rowid
  id            TEXT NOT NULL UNIQUE,              -- uuid
  api_key_id    TEXT,                              -- NULL = the global pool
  session_id    TEXT,
  type          TEXT NOT NULL DEFAULT 'factual' CHECK (type IN ('factual', 'episodic', 'procedural', 'semantic')),
  key           TEXT NOT NULL,
  content       TEXT NOT NULL,
  metadata      TEXT NOT NULL DEFAULT '{}',        -- JSON object
  expires_at    TEXT,                              -- UTC ISO, NULL = never
  tokens        INTEGER NOT NULL DEFAULT 0,        -- gpt-tokenizer count of content
  hit_count     INTEGER NOT NULL DEFAULT 0,        -- times returned by a real (non-preview) retrieval
  last_hit_at   TEXT,
  embedding_sig TEXT,                              -- signature of the embedded (vec0) vector; NULL = none
  external_sig  TEXT,                              -- signature of the point in the external store; NULL = none
  archived      INTEGER NOT NULL DEFAULT 0,        -- 1 = folded into a summary; not retrieved, still listed
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX memories_scope ON memories (api_key_id, type, created_at);
CREATE INDEX memories_session ON memories (session_id);
CREATE INDEX memories_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_sig ON memories (embedding_sig);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  key, content, content = 'memories', content_rowid = 'seq', tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, key, content) VALUES (new.seq, new.key, new.content);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.seq, old.key, old.content);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF key, content ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.seq, old.key, old.content);
  INSERT INTO memories_fts (rowid, key, content) VALUES (new.seq, new.key, new.content);
END;

-- Engine meta: 'embedding_signature' (source:model:dimensions of the vectors in the vec0 table),
-- 'vec_dimensions', counters.
CREATE TABLE memory_meta (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Engine settings: one JSON document (validated by the engine's zod schema, defaults filled on read).
CREATE TABLE memory_settings (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Per-API-key use in conversations: inject relevant memories, extract new ones.
CREATE TABLE memory_key_settings (
  api_key_id       TEXT PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  inject           INTEGER NOT NULL DEFAULT 0,
  extract          INTEGER NOT NULL DEFAULT 0,
  inject_max_tokens INTEGER NOT NULL DEFAULT 1000,
  inject_limit     INTEGER NOT NULL DEFAULT 10,
  strategy         TEXT NOT NULL DEFAULT 'hybrid' CHECK (strategy IN ('exact', 'semantic', 'hybrid')),
  scope            TEXT NOT NULL DEFAULT 'both' CHECK (scope IN ('key', 'global', 'both')),
  updated_at       TEXT NOT NULL
);
