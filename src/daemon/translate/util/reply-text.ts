import type { IrResponse } from '../ir.js';

/**
 * The text of a reply, one definition for every reader. `visible` (default): what the assistant said, its
 * text parts joined (memory extraction, router's own model calls). `generated`: everything the model
 * produced, refusals, thinking and tool calls (name and arguments) included, for estimating output tokens
 * when the upstream reported no usage.
 */
export function replyText(res: IrResponse, what: 'visible' | 'generated' = 'visible'): string {
  let out = '';
  for (const p of res.parts) {
    if (p.type === 'text') out += p.text;
    else if (what === 'visible') continue;
    else if (p.type === 'refusal' || p.type === 'thinking') out += p.text;
    else if (p.type === 'tool_call') out += p.name + p.arguments;
  }
  return out;
}
