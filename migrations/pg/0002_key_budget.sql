-- USD budgets per API key (issue 29 item 3), as in SQLite's 0028: {"period":"day"|"month","usd":N} as JSON, or NULL.
ALTER TABLE api_keys ADD COLUMN budget TEXT;
