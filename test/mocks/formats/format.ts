import type { Reply } from '../reply.js';
import type { MockRequest } from '../types.js';

/** Everything a wire format needs to render one answer. */
export interface RenderCtx {
  req: MockRequest;
  reply: Reply;
  /** Model name echoed back (the requested one). */
  model: string;
  /** Stable per-request id suffix from `mockId`. */
  id: string;
  created: number;
}

/** One provider endpoint's way of writing an answer as a JSON body or as SSE frames. */
export interface WireFormat {
  json(ctx: RenderCtx): unknown;
  /** Complete SSE frames, each ending in its blank line; the writer sends one frame per write. */
  stream(ctx: RenderCtx): string[];
  /** The in-stream error frame this provider sends after `sent` frames of a 200 stream. */
  streamError(ctx: RenderCtx, error: { status: number; message?: string; errorType?: string }, sent: number): string;
  jsonContentType: string;
  sseContentType: string;
}

/** `data:`-only frame, as OpenAI chat/completions and Gemini send. */
export function dataFrame(payload: unknown, eol = '\n'): string {
  return `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}${eol}${eol}`;
}

/** Named event frame, as Anthropic and OpenAI Responses send. */
export function eventFrame(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}
