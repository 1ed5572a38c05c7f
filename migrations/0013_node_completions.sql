-- Whether an OpenAI-compatible provider node serves legacy /completions (vLLM, llama.cpp, Ollama and most
-- compatible servers do): /v1/completions is then forwarded natively instead of translated to chat.
ALTER TABLE provider_nodes ADD COLUMN completions INTEGER NOT NULL DEFAULT 1;
