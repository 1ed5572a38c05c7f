import { z } from 'zod';
import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { runTool } from '../mcp/server.js';
import { TOOL_BY_NAME, TOOLS } from '../mcp/tools.js';
import { internalConverse } from '../proxy/internal-call.js';
import type { Services } from '../services.js';
import type { FunctionTool, IrMessage, IrUsage, ToolCallPart } from '../translate/ir.js';
import { replyText } from '../translate/util/reply-text.js';

/**
 * The built-in assistant (POST /api/copilot/chat, docs/agents.md): answers questions about this router with
 * the MCP tools (tools.ts), in a tool-calling loop through the executor with a configured model. The tools
 * run as the caller and are audited like MCP calls (transport `assistant`). The `chat` tool is left out: the
 * assistant is itself a chat.
 */

export const assistantBody = z.strictObject({
  messages: z
    .array(z.strictObject({ role: z.enum(['user', 'assistant']), content: z.string().min(1).max(100_000) }))
    .min(1)
    .max(100)
    .refine((m) => m.length === 0 || m[m.length - 1]?.role === 'user', { message: 'the last message must be from the user' }),
  model: z.string().trim().min(1).max(300).optional(),
});
export type AssistantBody = z.infer<typeof assistantBody>;

const SYSTEM = [
  'You are the assistant built into "router", a local model-routing proxy: it forwards OpenAI-, Anthropic- and',
  'Gemini-format requests to provider connections, with combos (named groups of models with a strategy),',
  'failover, circuit breakers, usage and cost accounting, a memory engine and webhooks.',
  "Answer the user's questions about this router's configuration, errors and usage. Use the tools to look",
  'things up instead of guessing; say briefly which facts came from which tool. Be concise.',
].join(' ');

let toolsCache: FunctionTool[] | undefined;
function assistantTools(): FunctionTool[] {
  toolsCache ??= TOOLS.filter((t) => t.name !== 'chat').map((t) => {
    const { $schema: _drop, ...parameters } = z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>;
    return { type: 'function', name: t.name, description: t.description, parameters };
  });
  return toolsCache;
}

export interface AssistantReply {
  reply: string;
  model: string;
  toolCalls: Array<{ name: string; arguments: string; ok: boolean; error?: string }>;
  rounds: number;
  usage: { inputTokens: number; outputTokens: number };
}

export async function runAssistant(services: Services, auth: AuthInfo, body: AssistantBody): Promise<AssistantReply> {
  const settings = services.settings.get();
  const model = body.model ?? settings.agents.assistantModel;
  if (!model) {
    throw new RouterError(409, 'No model for the assistant: pass "model" or set the agents.assistantModel setting (a <provider>/<model> id or a combo).', { code: 'assistant_model_not_set' });
  }
  const messages: IrMessage[] = body.messages.map((m) => ({ role: m.role, parts: [{ type: 'text', text: m.content }] }));
  const toolCalls: AssistantReply['toolCalls'] = [];
  const usage = { inputTokens: 0, outputTokens: 0 };
  const add = (u?: Partial<IrUsage>) => {
    usage.inputTokens += u?.inputTokens ?? 0;
    usage.outputTokens += u?.outputTokens ?? 0;
  };
  const maxRounds = settings.agents.assistantMaxToolRounds;
  for (let round = 1; ; round++) {
    // The last round offers no tools: the model must answer with what it has.
    const offerTools = round <= maxRounds;
    const r = await internalConverse(services, {
      endpoint: 'assistant',
      model,
      auth,
      system: SYSTEM,
      messages,
      tools: offerTools ? assistantTools() : undefined,
      maxTokens: 2048,
      timeoutMs: settings.requestDeadlineMs,
    });
    add(r.usage);
    const calls = r.value.parts.filter((p): p is ToolCallPart => p.type === 'tool_call');
    const served = `${services.providers.label(r.target.provider.id)}/${r.target.model}`;
    if (calls.length === 0 || !offerTools) {
      return { reply: replyText(r.value), model: served, toolCalls, rounds: round, usage };
    }
    messages.push({ role: 'assistant', parts: r.value.parts.filter((p) => p.type === 'text' || p.type === 'tool_call' || p.type === 'thinking') });
    for (const call of calls) {
      const def = TOOL_BY_NAME.get(call.name);
      let result: { ok: true; value: unknown } | { ok: false; error: string };
      if (!def || def.name === 'chat') result = { ok: false, error: `Unknown tool: ${call.name.slice(0, 100)}` };
      else {
        let args: unknown;
        try {
          args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
        } catch {
          args = undefined;
        }
        result = args === undefined ? { ok: false, error: 'The arguments are not JSON.' } : await runTool(services, services.mcp.audit, def, args, auth, { transport: 'assistant' });
      }
      toolCalls.push({ name: call.name, arguments: call.arguments, ok: result.ok, ...(result.ok ? {} : { error: result.error }) });
      const text = result.ok ? JSON.stringify(result.value) : `Error: ${result.error}`;
      messages.push({
        role: 'tool',
        parts: [{ type: 'tool_result', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: text.slice(0, 100_000) }], isError: !result.ok }],
      });
    }
  }
}
