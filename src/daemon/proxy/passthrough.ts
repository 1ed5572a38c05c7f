import { getUpstreamCodec } from '../translate/registry.js';
import type { WireFormat } from '../translate/ir.js';
import type { Target } from '../providers/target.js';

/**
 * The upstream body of a same-format passthrough: the client's body for the target's model id, as the
 * format's codec spells it (model in the path for Gemini; OpenAI-only fields left out for compatible
 * servers). Everything else, built-in tools included, passes untouched.
 */
export function nativeBody(format: WireFormat, raw: Record<string, unknown>, target: Target): Record<string, unknown> {
  const codec = getUpstreamCodec(format);
  return codec.nativeBody ? codec.nativeBody(raw, target.model, target.provider.id) : { ...raw, model: target.model };
}

/** Client headers a same-format upstream needs (Anthropic's `anthropic-beta` flags), when its format has any. */
export function nativeHeaders(format: WireFormat, clientHeaders: Headers): Record<string, string> | undefined {
  return getUpstreamCodec(format).nativeHeaders?.(clientHeaders);
}
