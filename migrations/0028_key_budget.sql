-- USD budgets per API key (issue 29 item 3): {"period":"day"|"month","usd":N} as JSON, or NULL for none.
ALTER TABLE api_keys ADD COLUMN budget TEXT;
