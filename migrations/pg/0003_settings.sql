-- Settings (SQLite: 0001_init.sql): one row per setting, value as JSON text (credential settings sealed
-- `{"enc": ...}` by the daemon), ISO-8601 TEXT time of the last write. Also holds rows the settings schema
-- does not know: the note vault's credentials (obsidianWebdav) and the cluster sealing check (_sealingCheck).
CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
