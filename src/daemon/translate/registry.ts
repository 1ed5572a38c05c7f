import type { ClientCodec, UpstreamCodec, UpstreamWireFormat } from './codec.js';
import type { WireFormat } from './ir.js';
import { CodecError } from './errors.js';
import { anthropicClient, anthropicUpstream } from './formats/anthropic/index.js';
import { openAiChatClient, openAiChatUpstream } from './formats/openai-chat/index.js';
import { openAiCompletionsClient, openAiCompletionsUpstream } from './formats/openai-completions/index.js';
import { openAiResponsesClient, openAiResponsesUpstream } from './formats/openai-responses/index.js';
import { geminiClient, geminiUpstream } from './formats/gemini/index.js';
import { antigravityUpstream, codeAssistUpstream } from './formats/code-assist/index.js';


/**
 * Codecs for the formats clients may call router in. Adding a format is one line here; the Record makes the
 * compiler name every format without one.
 */
export const clientCodecs: Record<WireFormat, ClientCodec> = {
  'openai-chat': openAiChatClient,
  'openai-completions': openAiCompletionsClient,
  anthropic: anthropicClient,
  'openai-responses': openAiResponsesClient,
  gemini: geminiClient,
};

/** Codecs for the formats router can call providers in. Adding a format is one line here. */
export const upstreamCodecs: Record<UpstreamWireFormat, UpstreamCodec> = {
  'openai-chat': openAiChatUpstream,
  'openai-completions': openAiCompletionsUpstream,
  anthropic: anthropicUpstream,
  'openai-responses': openAiResponsesUpstream,
  gemini: geminiUpstream,
  'gemini-code-assist': codeAssistUpstream,
  antigravity: antigravityUpstream,
};

/** The client codec of a format; throws (500) when none is registered, which is a wiring bug. */
export function getClientCodec(format: WireFormat): ClientCodec {
  const codec = clientCodecs[format];
  if (!codec) throw new CodecError(500, `No client codec is registered for '${format}'.`);
  return codec;
}

/** The upstream codec of a format; throws (500) when none is registered. */
export function getUpstreamCodec(format: UpstreamWireFormat): UpstreamCodec {
  const codec = upstreamCodecs[format];
  if (!codec) throw new CodecError(500, `No upstream codec is registered for '${format}'.`);
  return codec;
}
