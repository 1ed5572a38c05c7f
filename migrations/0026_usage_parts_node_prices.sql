-- Issue 31 "one usage model" (docs/usage.md): the parts of a row's tokens that price at their own rates,
-- stored beside the totals. cache_write_1h_tokens is the part of cache_write_tokens written for one hour
-- (Anthropic cache_creation.ephemeral_1h_input_tokens); audio_in/image_in are parts of tokens_in,
-- audio_out/image_out parts of tokens_out. Rows recorded before this migration keep 0.
ALTER TABLE usage_log ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_log ADD COLUMN audio_in_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_log ADD COLUMN audio_out_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_log ADD COLUMN image_in_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_log ADD COLUMN image_out_tokens INTEGER NOT NULL DEFAULT 0;

-- Issue 31 item 5: before, a price set as PUT /api/pricing/<node prefix>/<model> was stored under the
-- prefix, while the node's usage rows carry its id, so it never applied. Such rows move to the node's id
-- (where the node has no price of its own for that model yet; otherwise the id's price, the one in effect,
-- stays and the dead prefix row is dropped). A built-in provider id is never a node prefix (the node routes
-- refuse it), so no built-in price moves.
UPDATE pricing_overrides
   SET provider = (SELECT n.id FROM provider_nodes n WHERE n.prefix = pricing_overrides.provider)
 WHERE provider IN (SELECT prefix FROM provider_nodes)
   AND NOT EXISTS (
     SELECT 1 FROM pricing_overrides o, provider_nodes n
      WHERE n.prefix = pricing_overrides.provider AND o.provider = n.id AND o.model = pricing_overrides.model);
DELETE FROM pricing_overrides WHERE provider IN (SELECT prefix FROM provider_nodes);

-- Issue 31 item 4: an eval case whose model has no known price is unpriced, not $0. Its cost_usd stays 0
-- (NOT NULL) and cost_source says 'unpriced': read back as null and counted apart in the run's scores.
ALTER TABLE eval_results ADD COLUMN cost_source TEXT CHECK (cost_source IN ('reported', 'computed', 'unpriced'));
