import type { RequestStage } from '../proxy/stages.js';
import type { Tracing } from './tracing.js';

/** After every other stage: it reads the reply the client got. */
export const TRACE_CONTENT_STAGE_ORDER = 1000;

/**
 * Completion content for trace export (setting otelCaptureContent, off by default): hands each complete
 * reply, streamed ones assembled, to the request's span. Registered only when content export is on; it
 * then takes every chat request through the IR (the price of the opt-in, stated in docs/observability.md).
 */
export function traceContentStage(tracing: Tracing): RequestStage {
  return {
    name: 'trace-content',
    wants: () => true,
    onComplete(_request, response, ctx) {
      tracing.completion(ctx.traceId, response);
    },
  };
}
