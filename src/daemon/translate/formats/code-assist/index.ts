import { randomUUID } from 'node:crypto';
import type { StreamDecoder, UpstreamCodec, UpstreamEncodeOptions } from '../../codec.js';
import type { IrRequest, SseMessage } from '../../ir.js';
import { geminiUpstream } from '../gemini/index.js';

/**
 * Google's Code Assist API (`cloudcode-pa.googleapis.com/v1internal`), what Gemini CLI and Antigravity
 * call with a Google login: the Gemini `generateContent` body wrapped as `{model, project, request}`, each
 * reply (and each stream chunk) wrapped as `{response}`. Everything inside the envelope is plain Gemini, so
 * these codecs wrap the Gemini one.
 */

/** The reply inside a Code Assist envelope (`{response: {...}}`); a body without one is taken as it is. */
function unwrap(body: unknown): unknown {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'response' in body) return (body as { response: unknown }).response;
  return body;
}

/**
 * The client metadata Gemini CLI sends with its Code Assist setup calls (gemini-cli
 * packages/core/src/code_assist/setup.ts, `coreClientMetadata`).
 */
export const CODE_ASSIST_METADATA = { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' } as const;

/**
 * The body of `POST v1internal:loadCodeAssist` exactly as Gemini CLI builds it (gemini-cli
 * packages/core/src/code_assist/setup.ts `_doSetupUser`; server.ts `loadCodeAssist` is a `requestPost`):
 * `{cloudaicompanionProject, metadata: {...coreClientMetadata, duetProject}}`, the project fields left out
 * when there is no project yet (JSON.stringify drops them there too).
 */
export function loadCodeAssistBody(project: string | undefined): Record<string, unknown> {
  return {
    ...(project ? { cloudaicompanionProject: project } : {}),
    metadata: { ...CODE_ASSIST_METADATA, ...(project ? { duetProject: project } : {}) },
  };
}

function unwrapMessage(message: SseMessage): SseMessage {
  try {
    return { ...message, data: JSON.stringify(unwrap(JSON.parse(message.data))) };
  } catch {
    return message;
  }
}

function unwrappingDecoder(): StreamDecoder {
  const inner = geminiUpstream.createStreamDecoder();
  return {
    push: (message) => inner.push(unwrapMessage(message)),
    end: () => inner.end(),
  };
}

function envelope(extra: (options: UpstreamEncodeOptions | undefined) => Record<string, unknown>) {
  return (request: IrRequest, options?: UpstreamEncodeOptions): Record<string, unknown> => ({
    model: request.model,
    ...(options?.project ? { project: options.project } : {}),
    ...extra(options),
    request: geminiUpstream.encodeRequest(request, options),
  });
}

const shared = {
  decodeResponse: (body: unknown) => geminiUpstream.decodeResponse(unwrap(body)),
  createStreamDecoder: unwrappingDecoder,
  path: (_model: string, stream: boolean) => `v1internal:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  countTokensPath: undefined,
  // Code Assist has no model list of its own: the catalog keeps the provider's static list. loadCodeAssist
  // (a POST, like every v1internal method) stands in for it where a list call checks the credential.
  modelsPath: 'v1internal:loadCodeAssist',
  modelsBody: loadCodeAssistBody,
  parseModels: () => [],
  readError: geminiUpstream.readError,
} satisfies Partial<UpstreamCodec>;

/** Gemini CLI's envelope: `{model, project, request}`. */
export const codeAssistUpstream: UpstreamCodec = {
  format: 'gemini-code-assist',
  encodeRequest: envelope(() => ({})),
  ...shared,
};

/** Antigravity's envelope: Gemini CLI's plus `userAgent`, `requestType` and a `requestId` per request. */
export const antigravityUpstream: UpstreamCodec = {
  format: 'antigravity',
  encodeRequest: envelope(() => ({ userAgent: 'antigravity', requestType: 'agent', requestId: `agent-${randomUUID()}` })),
  ...shared,
};
