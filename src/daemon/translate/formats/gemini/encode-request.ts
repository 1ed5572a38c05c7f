import type { IrReasoning, IrRequest, IrToolChoice } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { assertResponsesStatePortable } from '../openai-responses/passthrough.js';
import { foldSystemMessages } from '../../util/system.js';
import { encodeContents } from './encode-contents.js';

/**
 * IR tools as Gemini tool entries: all functions in one `functionDeclarations` entry, then Gemini
 * built-ins. Parameters go as `parametersJsonSchema` (full JSON Schema, what IR carries) rather than
 * `parameters`, whose OpenAPI subset would need a lossy conversion.
 */
function encodeTools(request: IrRequest): Array<Record<string, unknown>> | undefined {
  const declarations: Array<Record<string, unknown>> = [];
  const builtins: Array<Record<string, unknown>> = [];
  for (const tool of request.tools ?? []) {
    if (tool.type === 'builtin') {
      if (tool.format === 'gemini') builtins.push(tool.raw);
      else noteDropped(request, `tools: ${tool.format} built-in ${String(tool.raw.type ?? Object.keys(tool.raw)[0])}`);
      continue;
    }
    declarations.push({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters ? { parametersJsonSchema: tool.parameters } : {}),
    });
  }
  const tools = [...(declarations.length ? [{ functionDeclarations: declarations }] : []), ...builtins];
  return tools.length ? tools : undefined;
}

function encodeToolConfig(choice: IrToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'object') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  const mode = choice === 'auto' ? 'AUTO' : choice === 'none' ? 'NONE' : 'ANY';
  return { functionCallingConfig: { mode } };
}

/**
 * IR reasoning as `thinkingConfig`. Gemini takes a budget (2.5) or a level (3) but not both: a budget wins,
 * an effort becomes a level (`xhigh` as `high`, `none` as budget 0). Thoughts are included when the client
 * asked for summaries or turned thinking on by budget or switch (it then expects to see them).
 */
export function encodeThinking(reasoning: IrReasoning | undefined): Record<string, unknown> | undefined {
  if (!reasoning) return undefined;
  if (reasoning.enabled === false || reasoning.effort === 'none') return { thinkingBudget: 0 };
  const out: Record<string, unknown> = {};
  if (reasoning.budgetTokens !== undefined) out.thinkingBudget = reasoning.budgetTokens;
  else if (reasoning.effort) out.thinkingLevel = reasoning.effort === 'xhigh' ? 'high' : reasoning.effort;
  else if (reasoning.enabled) out.thinkingBudget = -1;
  if (reasoning.summary || reasoning.budgetTokens !== undefined || reasoning.enabled) out.includeThoughts = true;
  return Object.keys(out).length ? out : undefined;
}

function encodeGenerationConfig(request: IrRequest): Record<string, unknown> | undefined {
  const format = request.responseFormat;
  const fields: Record<string, unknown> = {
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    topK: request.topK,
    stopSequences: request.stop,
    seed: request.seed,
    presencePenalty: request.presencePenalty,
    frequencyPenalty: request.frequencyPenalty,
    // Structured output goes as `responseJsonSchema` (JSON Schema as IR holds it), not `responseSchema`.
    responseMimeType: format && format.type !== 'text' ? 'application/json' : undefined,
    responseJsonSchema: format?.type === 'json_schema' ? format.schema : undefined,
    thinkingConfig: encodeThinking(request.reasoning),
  };
  const out = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return Object.keys(out).length ? out : undefined;
}

function noteUnsupported(request: IrRequest): void {
  if (request.parallelToolCalls !== undefined) noteDropped(request, 'parallel_tool_calls');
  if (request.user !== undefined) noteDropped(request, 'user');
  if (request.metadata !== undefined) noteDropped(request, 'metadata');
}

/**
 * Builds a `generateContent` body. The model and streaming are not in it: the caller puts the model in the
 * URL and picks `:streamGenerateContent?alt=sse` when `request.stream` is set.
 */
export function encodeGeminiRequest(request: IrRequest): Record<string, unknown> {
  assertResponsesStatePortable(request, 'gemini');
  noteUnsupported(request);
  // Gemini has no system role in `contents`: later system messages become marked user text (util/system.ts).
  const body: Record<string, unknown> = { contents: encodeContents(foldSystemMessages(request.messages), request) };
  const system = request.system.map((p) => ({ text: p.text }));
  // Gemini rejects empty `contents`: a conversation that is only a system prompt sends it as the user turn.
  if (!(body.contents as unknown[]).length && system.length) body.contents = [{ role: 'user', parts: system }];
  else if (system.length) body.systemInstruction = { parts: system };
  const optional: Record<string, unknown> = {
    tools: encodeTools(request),
    toolConfig: encodeToolConfig(request.toolChoice),
    generationConfig: encodeGenerationConfig(request),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) body[key] = value;
  const pass = request.passthrough;
  if (pass?.format === 'gemini') {
    for (const [key, value] of Object.entries(pass.fields)) {
      body[key] = key === 'generationConfig' ? { ...(body.generationConfig as object | undefined), ...(value as object) } : value;
    }
  }
  return body;
}
