import { contextLengthOf, rawMaxTokens } from '../compression/stage.js';
import { RouterError } from '../http/errors.js';
import type { PipelineDeps } from './deps.js';
import type { Plan } from './plan.js';

/**
 * A combo's context fit (`contextFit: true`): targets whose context window (the model catalog's figure, or
 * what a provider node declares for the model) cannot hold the request's estimated input tokens plus the
 * output it asks for are left out of the plan before any call. A target whose window is unknown stays (it
 * may fit; the upstream decides). When no target fits, the request is refused with a 400 that says how
 * big it is and the largest window on offer. The tokens are counted only when some window is known and
 * the cheap bound (every token is at least one byte of the body) does not already clear every window.
 */
export async function fitContext(services: PipelineDeps, plan: Plan, raw: Record<string, unknown>, inputTokens: () => Promise<number>): Promise<void> {
  const windows = plan.targets.map((t) => contextLengthOf(services, t));
  const known = windows.filter((w): w is number => w !== undefined);
  if (known.length === 0) return;
  const output = rawMaxTokens(raw) ?? 0;
  // Body bytes bound the input tokens from above: when even that fits the smallest window, nothing is counted.
  if (Buffer.byteLength(JSON.stringify(raw)) + output <= Math.min(...known)) return;
  const input = await inputTokens();
  const need = input + output;
  const kept = plan.targets.filter((_, i) => windows[i] === undefined || windows[i]! >= need);
  if (kept.length === plan.targets.length) return;
  if (kept.length === 0) {
    const largest = Math.max(...known);
    const model = plan.targets[windows.indexOf(largest)]!.publicModel;
    throw new RouterError(
      400,
      `This request needs about ${need} tokens (${input} estimated input + ${output} max output), more than any target of combo '${plan.combo?.name}' can hold: ` +
        `the largest context window is ${largest} tokens (${model}). Shorten the conversation, lower the max output, or add a model with a longer context.`,
      { code: 'context_length_exceeded', extra: { param: 'messages', requestTokens: need, largestContextWindow: largest } },
    );
  }
  plan.targets = kept;
}
