import type { IrReasoning, IrRequest, IrResponseFormat, IrTool, IrToolChoice } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { openApiToJsonSchema } from './json-schema.js';
import type { GeminiGenerationConfig, GeminiRequest, GeminiTool } from './schema.js';

/** Tool entries as IR tools: each function declaration, and each built-in key (`googleSearch`...) as one tool. */
export function decodeTools(tools: GeminiTool[] | undefined): IrTool[] | undefined {
  const out: IrTool[] = [];
  for (const tool of tools ?? []) {
    for (const [key, value] of Object.entries(tool)) {
      if (key !== 'functionDeclarations') {
        out.push({ type: 'builtin', format: 'gemini', raw: { [key]: value } });
        continue;
      }
      for (const fn of tool.functionDeclarations ?? []) {
        const parameters = fn.parametersJsonSchema ?? (fn.parameters ? openApiToJsonSchema(fn.parameters) : undefined);
        out.push({
          type: 'function',
          name: fn.name,
          ...(fn.description !== undefined ? { description: fn.description } : {}),
          ...(parameters ? { parameters } : {}),
        });
      }
    }
  }
  return out.length ? out : undefined;
}

type ToolConfig = GeminiRequest['toolConfig'];

/** True when IR can hold the whole tool config (else the raw config passes through to a Gemini upstream). */
export function toolConfigFits(config: ToolConfig): boolean {
  if (!config) return true;
  const fc = config.functionCallingConfig;
  const onlyFc = Object.keys(config).every((k) => k === 'functionCallingConfig');
  return onlyFc && fc?.mode !== 'VALIDATED' && (fc?.allowedFunctionNames?.length ?? 0) <= 1;
}

/** `functionCallingConfig` as an IR tool choice: ANY with one allowed name forces that function. */
export function decodeToolChoice(config: ToolConfig, request: IrRequest): IrToolChoice | undefined {
  const fc = config?.functionCallingConfig;
  if (!toolConfigFits(config)) noteDropped(request, 'toolConfig');
  switch (fc?.mode) {
    case 'AUTO':
    case 'VALIDATED':
      return 'auto';
    case 'NONE':
      return 'none';
    case 'ANY': {
      const names = fc.allowedFunctionNames ?? [];
      return names.length === 1 && names[0] ? { name: names[0] } : 'required';
    }
    default:
      return undefined;
  }
}

/** JSON output settings as an IR response format. `responseSchema` is converted from Gemini's OpenAPI subset. */
export function decodeResponseFormat(config: GeminiGenerationConfig | undefined, request: IrRequest): IrResponseFormat | undefined {
  const mime = config?.responseMimeType;
  const schema = config?.responseJsonSchema ?? (config?.responseSchema ? openApiToJsonSchema(config.responseSchema) : undefined);
  if (mime === 'application/json') return schema ? { type: 'json_schema', name: schemaName(schema), schema } : { type: 'json_object' };
  if (mime && mime !== 'text/plain') noteDropped(request, `generationConfig.responseMimeType=${mime}`);
  return undefined;
}

/** Gemini schemas have no name (OpenAI requires one): the schema's title, made name-safe, else `response`. */
function schemaName(schema: Record<string, unknown>): string {
  const title = typeof schema.title === 'string' ? schema.title.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) : '';
  return title || 'response';
}

const LEVELS: Record<string, IrReasoning['effort']> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' };

/**
 * `thinkingConfig` as IR reasoning: a budget of 0 turns thinking off, -1 means "dynamic" (on, no budget),
 * `thinkingLevel` is an effort, `includeThoughts` asks for thought summaries in the reply.
 */
export function decodeReasoning(config: GeminiGenerationConfig['thinkingConfig']): IrReasoning | undefined {
  if (!config) return undefined;
  const out: IrReasoning = {};
  const budget = config.thinkingBudget;
  if (budget === 0) out.enabled = false;
  else if (budget === -1) out.enabled = true;
  else if (budget !== undefined) out.budgetTokens = budget;
  const level = config.thinkingLevel ? LEVELS[config.thinkingLevel.toLowerCase()] : undefined;
  if (level) out.effort = level;
  if (config.includeThoughts) out.summary = 'auto';
  return Object.keys(out).length ? out : undefined;
}

/** `generationConfig` keys router translates; the others pass through to a Gemini upstream only. */
export const KNOWN_GENERATION_KEYS = new Set([
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'stopSequences',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
]);
