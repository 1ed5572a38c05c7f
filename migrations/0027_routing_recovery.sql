-- Routing beyond failover (issue 30 items 2-4): a combo's hedged requests (start the next target too when
-- the first sent no byte within this many ms; NULL: off), recovery mid-stream ('error' or 'continue';
-- NULL: off) and context fit (skip targets whose context window cannot hold the request; 0: off).
ALTER TABLE combos ADD COLUMN hedge_after_ms INTEGER;
ALTER TABLE combos ADD COLUMN mid_stream_recovery TEXT;
ALTER TABLE combos ADD COLUMN context_fit INTEGER NOT NULL DEFAULT 0;
