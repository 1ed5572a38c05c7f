-- The rerank dialect of an OpenAI-compatible provider node: 'cohere' for the Cohere/Jina shape that vLLM and
-- Infinity serve at {base}/rerank, 'tei' for Hugging Face Text Embeddings Inference ({query, texts}).
ALTER TABLE provider_nodes ADD COLUMN rerank_format TEXT NOT NULL DEFAULT 'cohere';
