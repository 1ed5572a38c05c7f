import type { IrRequest } from '../../ir.js';
import { isRecord } from '../../util/json.js';
import { parseBody } from '../../util/validate.js';
import { camelizeKeys } from './camel-case.js';
import {
  decodeReasoning,
  decodeResponseFormat,
  decodeToolChoice,
  decodeTools,
  KNOWN_GENERATION_KEYS,
  toolConfigFits,
} from './decode-config.js';
import { decodeContents, decodeSystem } from './decode-contents.js';
import { geminiRequestSchema, type GeminiRequest } from './schema.js';

/** Copies the defined entries of `fields` onto `target`. */
function assignDefined<T extends object>(target: T, fields: Partial<T>): void {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (target as Record<string, unknown>)[key] = value;
}

/**
 * Fields only a Gemini upstream understands: safety settings, cached content, labels, generation settings
 * router does not translate (`responseModalities`, `candidateCount`...), and a tool config IR cannot hold.
 */
function passthroughFields(req: GeminiRequest): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of ['safetySettings', 'cachedContent', 'labels']) if (req[key] !== undefined) fields[key] = req[key];
  const extras = Object.entries(req.generationConfig ?? {}).filter(([k]) => !KNOWN_GENERATION_KEYS.has(k));
  if (extras.length) fields.generationConfig = Object.fromEntries(extras);
  if (!toolConfigFits(req.toolConfig)) fields.toolConfig = req.toolConfig;
  return fields;
}

/**
 * Decodes and validates a Gemini `generateContent` body into IR; throws a 400 on invalid input. The model
 * and the streaming flag are not in a Gemini body but in the URL (`models/{model}:streamGenerateContent`),
 * so the route passes them in; a `models/` prefix is removed.
 */
export function decodeGeminiRequest(body: unknown, model: string, stream: boolean): IrRequest {
  const req = parseBody(geminiRequestSchema, camelizeKeys(body));
  const ir: IrRequest = { model: model.replace(/^models\//, ''), system: decodeSystem(req.systemInstruction), messages: [], stream };
  ir.messages = decodeContents(req.contents, ir);
  const gen = req.generationConfig;
  assignDefined(ir, {
    tools: decodeTools(req.tools),
    toolChoice: decodeToolChoice(req.toolConfig, ir),
    maxTokens: gen?.maxOutputTokens,
    temperature: gen?.temperature,
    topP: gen?.topP,
    topK: gen?.topK,
    stop: gen?.stopSequences?.length ? gen.stopSequences : undefined,
    seed: gen?.seed,
    presencePenalty: gen?.presencePenalty,
    frequencyPenalty: gen?.frequencyPenalty,
    responseFormat: decodeResponseFormat(gen, ir),
    reasoning: decodeReasoning(gen?.thinkingConfig),
  });
  const fields = passthroughFields(req);
  if (Object.keys(fields).length) ir.passthrough = { format: 'gemini', fields };
  return ir;
}

/**
 * The `ClientCodec.decodeRequest` entry: the route injects the URL's model and streaming flag into the body
 * as `model` and `stream` (fields a Gemini body never has), keeping the codec signature format-neutral.
 */
export function decodeGeminiClientBody(body: unknown): IrRequest {
  if (!isRecord(body)) return decodeGeminiRequest(body, '', false);
  const { model, stream, ...rest } = body;
  return decodeGeminiRequest(rest, typeof model === 'string' ? model : '', stream === true);
}
