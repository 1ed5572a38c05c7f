-- The user's price overrides (SQLite: 0004_usage.sql, 0020_pricing_units.sql, 0026_usage_parts_node_prices.sql):
-- USD per million tokens as DOUBLE PRECISION (SQLite's REAL), null cache/reasoning rates billed at the
-- input/output rate, the media and rerank unit rates as one JSON text object, ISO-8601 TEXT time.
CREATE TABLE pricing_overrides (
  provider    TEXT NOT NULL,
  model       TEXT NOT NULL,
  input       DOUBLE PRECISION NOT NULL,
  output      DOUBLE PRECISION NOT NULL,
  cache_read  DOUBLE PRECISION,
  cache_write DOUBLE PRECISION,
  reasoning   DOUBLE PRECISION,
  updated_at  TEXT NOT NULL,
  units       TEXT,
  PRIMARY KEY (provider, model)
);
