import type { IrMessage, IrReasoning, IrRequest, IrTool, IrToolChoice, TextPart } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { parseAt, parseBody } from '../../util/validate.js';
import { cacheOf, decodeTurn } from './decode-content.js';
import { splitLeadingSystem } from '../../util/system.js';
import { blockSchemas, customToolSchema, messagesRequestSchema, type MessagesRequest } from './schema.js';

const textBlockSchema = blockSchemas.text;

function decodeSystem(system: MessagesRequest['system']): TextPart[] {
  if (system == null) return [];
  if (typeof system === 'string') return system ? [{ type: 'text', text: system }] : [];
  return system.map((b) => ({ type: 'text', text: b.text, ...cacheOf(b.cache_control) }));
}

/** Custom tools become functions; server tools (`web_search_20250305`, `bash_...`) stay raw built-ins. */
function decodeTools(tools: MessagesRequest['tools']): IrTool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((raw, i): IrTool => {
    if (raw.type != null && raw.type !== 'custom') return { type: 'builtin', format: 'anthropic', raw };
    const t = parseAt(customToolSchema, raw, `tools[${i}]`);
    return {
      type: 'function',
      name: t.name,
      ...(t.description != null ? { description: t.description } : {}),
      parameters: t.input_schema,
      ...cacheOf(t.cache_control),
    };
  });
}

function decodeToolChoice(choice: MessagesRequest['tool_choice']): IrToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === 'tool') return { name: choice.name };
  return choice.type === 'any' ? 'required' : choice.type;
}

/**
 * `thinking` and `output_config.effort` -> IR reasoning. Adaptive thinking is "enabled, no budget". An
 * effort without thinking is marked `enabled: false` so that it is not turned into a thinking budget.
 */
function decodeReasoning(req: MessagesRequest): IrReasoning | undefined {
  const effort = req.output_config?.effort;
  const r: IrReasoning = {};
  if (effort) r.effort = effort === 'max' ? 'xhigh' : effort;
  const thinking = req.thinking;
  if (thinking?.type === 'enabled') Object.assign(r, { enabled: true, budgetTokens: thinking.budget_tokens });
  else if (thinking?.type === 'adaptive') r.enabled = true;
  else if (thinking?.type === 'disabled' || effort) r.enabled = false;
  return Object.keys(r).length ? r : undefined;
}

/** A mid-conversation system message: its text blocks (tool addition/removal blocks have no IR form). */
function decodeSystemTurn(m: MessagesRequest['messages'][number], param: string, ir: IrRequest): IrMessage[] {
  for (const field of ['clear_at', 'output_config']) if ((m as Record<string, unknown>)[field] != null) noteDropped(ir, `system message ${field}`);
  if (m.content == null) return [];
  const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
  const parts = blocks.flatMap((raw, i): TextPart[] => {
    if (raw.type !== 'text') {
      noteDropped(ir, `system message block ${raw.type}`);
      return [];
    }
    const block = parseAt(textBlockSchema, raw, `${param}[${i}]`);
    return block.text === '' ? [] : [{ type: 'text', text: block.text, ...cacheOf(block.cache_control) }];
  });
  return parts.length ? [{ role: 'system', parts }] : [];
}

function decodeMessages(req: MessagesRequest, ir: IrRequest): IrMessage[] {
  const names = new Map<string, string>();
  return req.messages.flatMap((m, i) => {
    const param = `messages[${i}].content`;
    if (m.role === 'system') return decodeSystemTurn(m, param, ir);
    return decodeTurn(m.role, m.content ?? '', param, ir, names);
  });
}

/**
 * Request fields only a Messages upstream understands (several gated by a beta the client names in
 * `anthropic-beta`): kept for an Anthropic upstream (IrRequest.passthrough), ignored by the others.
 */
const ANTHROPIC_ONLY_FIELDS = ['service_tier', 'container', 'mcp_servers', 'context_management'];

/** The flags of `anthropic-beta` headers (comma-separated, possibly repeated), in order, without duplicates. */
export function betaFlags(headers: Headers | undefined): string[] {
  const raw = headers?.get('anthropic-beta');
  if (!raw) return [];
  return [...new Set(raw.split(',').map((b) => b.trim()).filter(Boolean))];
}

/**
 * Decodes and validates a Messages request into IR; throws a 400 on invalid input. `headers` supplies the
 * client's `anthropic-beta` flags (IrRequest.betas). System messages that open `messages` join the system
 * prompt; later ones stay at their position.
 */
export function decodeMessagesRequest(body: unknown, headers?: Headers): IrRequest {
  const req = parseBody(messagesRequestSchema, body);
  const ir: IrRequest = { model: req.model, system: decodeSystem(req.system), messages: [], stream: req.stream === true };
  const { system, messages } = splitLeadingSystem(decodeMessages(req, ir));
  ir.system.push(...system);
  ir.messages = messages;
  const betas = betaFlags(headers);
  if (betas.length) ir.betas = betas;
  const format = req.output_config?.format;
  const fields: Partial<IrRequest> = {
    tools: decodeTools(req.tools),
    toolChoice: decodeToolChoice(req.tool_choice),
    parallelToolCalls: req.tool_choice?.disable_parallel_tool_use ? false : undefined,
    maxTokens: req.max_tokens,
    temperature: req.temperature ?? undefined,
    topP: req.top_p ?? undefined,
    topK: req.top_k ?? undefined,
    stop: req.stop_sequences?.length ? req.stop_sequences : undefined,
    reasoning: decodeReasoning(req),
    // Anthropic has no schema name; the schema's title is the best one, as OpenAI requires a name.
    responseFormat: format ? { type: 'json_schema', name: schemaName(format.schema), schema: format.schema } : undefined,
    user: req.metadata?.user_id ?? undefined,
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (ir as unknown as Record<string, unknown>)[key] = value;
  if (req.output_config?.effort === 'max') noteDropped(ir, 'output_config.effort=max (sent as xhigh)');
  const only: Record<string, unknown> = {};
  for (const field of ANTHROPIC_ONLY_FIELDS) if ((req as Record<string, unknown>)[field] != null) only[field] = (req as Record<string, unknown>)[field];
  if (Object.keys(only).length) ir.passthrough = { format: 'anthropic', fields: only };
  return ir;
}

function schemaName(schema: Record<string, unknown>): string {
  const title = typeof schema.title === 'string' ? schema.title.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) : '';
  return title || 'response';
}
