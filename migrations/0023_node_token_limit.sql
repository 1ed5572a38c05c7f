-- The output-limit field a Chat Completions provider node is sent: 'auto' (max_completion_tokens for OpenAI
-- reasoning models, whose servers refuse max_tokens; max_tokens otherwise), 'max_tokens' or
-- 'max_completion_tokens'.
ALTER TABLE provider_nodes ADD COLUMN token_limit_field TEXT NOT NULL DEFAULT 'auto';
