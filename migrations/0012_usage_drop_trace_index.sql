-- The trace id index of usage_log served no query (the request log pages by id and filters by time,
-- provider, model, key; the summary counts distinct trace ids over a time range, through usage_log_ts),
-- and trace ids are random UUIDs: every row landed on a random page of it, which made it most of the cost
-- of writing a row once the log outgrew SQLite's page cache (45-50 instead of 10-11 us of CPU per row
-- with 300,000 rows kept; docs/usage.md, "Overhead").
DROP INDEX IF EXISTS usage_log_trace;
