-- Per-key limits and the persisted quota counters (see src/daemon/quotas/).
-- daily_request_limit: NULL = use the defaultDailyRequestLimit setting; 0 = unlimited.
-- token_limits: JSON array of {scope: 'global' | 'provider:<id>' | 'model:<provider/model>', period: 'day' | 'month', limit}.
ALTER TABLE api_keys ADD COLUMN daily_request_limit INTEGER;
ALTER TABLE api_keys ADD COLUMN token_limits TEXT NOT NULL DEFAULT '[]';

-- Counters written behind (batched on a timer, flushed on shutdown) so daily request counts and token
-- usage survive a restart. One row per key, counter, period and period window; past windows are pruned.
--   counter: 'requests' (period day) or 'tokens:<scope>' (scope as in token_limits)
--   period_start: the UTC window, 'YYYY-MM-DD' for day and 'YYYY-MM' for month
CREATE TABLE quota_counters (
  api_key_id   TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  counter      TEXT NOT NULL,
  period       TEXT NOT NULL CHECK (period IN ('day', 'month')),
  period_start TEXT NOT NULL,
  used         INTEGER NOT NULL DEFAULT 0,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (api_key_id, counter, period, period_start)
);
