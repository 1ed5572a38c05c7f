-- Dashboard sessions and password (SQLite 0001), mirrored for cluster mode: a session made on one node
-- opens every node. Only the sha256 of a cookie value and the scrypt hash of the password are stored.
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,  -- sha256 of the cookie value
  created_at TEXT NOT NULL,
  expires_at BIGINT NOT NULL    -- unix ms
);

CREATE TABLE auth_password (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  hash       TEXT NOT NULL,  -- scrypt$N$r$p$salt$hash
  updated_at TEXT NOT NULL
);
