-- Facts request stages report for a request (compression applied, guardrail findings, cache hit), as JSON.
ALTER TABLE usage_log ADD COLUMN notes TEXT;
