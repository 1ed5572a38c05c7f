import type { IrRequest, IrTool, IrToolChoice } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { functionToolSchema } from './schema.js';
import { parseAt } from './validate.js';

/** Client `tools` as IR tools: flat function tools, everything else a Responses built-in. */
export function decodeTools(tools: Array<Record<string, unknown>> | null | undefined): IrTool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((raw, i): IrTool => {
    if (raw.type !== 'function') return { type: 'builtin', format: 'openai-responses', raw };
    const t = parseAt(functionToolSchema, raw, `tools[${i}]`);
    return {
      type: 'function',
      name: t.name,
      ...(t.description != null ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
      ...(t.strict != null ? { strict: t.strict } : {}),
    };
  });
}

/**
 * Client `tool_choice` as IR. Choices IR cannot hold (a built-in tool, `allowed_tools`) are kept raw in
 * `passthrough` by the caller and noted as dropped for other formats.
 */
export function decodeToolChoice(choice: unknown, request: IrRequest): IrToolChoice | undefined {
  if (choice == null) return undefined;
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  const c = choice as { type: string; name?: string };
  if (c.type === 'function' && c.name) return { name: c.name };
  noteDropped(request, `tool_choice.type=${c.type}`);
  return undefined;
}

/**
 * IR tools in the Responses shape. `strict` is always sent: the Responses API defaults it to true, which
 * would reject the loose schemas other formats allow, so an unspecified IR `strict` means false.
 */
export function encodeTools(tools: IrTool[] | undefined, request: IrRequest): Array<Record<string, unknown>> | undefined {
  if (!tools?.length) return undefined;
  const out: Array<Record<string, unknown>> = [];
  for (const tool of tools) {
    if (tool.type === 'function') {
      out.push({
        type: 'function',
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        strict: tool.strict ?? false,
      });
    } else if (tool.format === 'openai-responses') out.push(tool.raw);
    else noteDropped(request, `tools: ${tool.format} built-in ${String(tool.raw.type ?? Object.keys(tool.raw)[0])}`);
  }
  return out.length ? out : undefined;
}

/** IR tool choice in the Responses shape. */
export function encodeToolChoice(choice: IrToolChoice | undefined): unknown {
  if (choice === undefined) return undefined;
  return typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
}
