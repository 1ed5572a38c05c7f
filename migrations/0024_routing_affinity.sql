-- Routing beyond failover (issue 30): a combo's cache affinity (keep one conversation on one account and
-- target: off, session, prefix), and the model an upstream says it served when it differs from the one asked.
ALTER TABLE combos ADD COLUMN affinity TEXT NOT NULL DEFAULT 'off';
ALTER TABLE usage_log ADD COLUMN served_model TEXT;
