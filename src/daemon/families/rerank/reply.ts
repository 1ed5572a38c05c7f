import { z } from 'zod';
import type { FamilyReply } from '../family.js';

const result = z.object({ index: z.number(), relevance_score: z.number(), document: z.unknown().optional() });
const meta = (version: '1' | '2') =>
  z.object({ api_version: z.object({ version: z.literal(version) }), billed_units: z.object({ search_units: z.number().optional(), input_tokens: z.number().optional() }) });

/** `POST /v1/rerank`: router's reply `{id, model, results, usage}` with Cohere's v1 `meta` (the reply is router's own: these fields only). */
export const rerankReply: FamilyReply = {
  json: z.object({
    id: z.string(),
    model: z.string(),
    results: z.array(result),
    usage: z.object({ total_tokens: z.number().optional(), search_units: z.number().optional() }),
    meta: meta('1'),
  }),
};

/** `POST /v2/rerank`: Cohere's v2 reply exactly (documents only when the request asked for them). */
export const rerankV2Reply: FamilyReply = { json: z.object({ id: z.string(), results: z.array(result), meta: meta('2') }) };
