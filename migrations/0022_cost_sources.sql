-- Cost sources (CONTRACT "Model catalog and cost"): where each usage row's cost came from and which price
-- table priced it. cost_source: 'reported' (the provider's own figure), 'computed' (tokens x price_version's
-- price) or 'unpriced' (no price known: cost_usd is stored as 0 but read back as null, and counted apart in
-- analytics). Rows recorded before this migration keep NULL in both columns.
ALTER TABLE usage_log ADD COLUMN cost_source TEXT CHECK (cost_source IN ('reported', 'computed', 'unpriced'));
ALTER TABLE usage_log ADD COLUMN price_version TEXT;
