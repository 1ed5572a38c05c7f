import type { AuthInfo } from '../auth/pipeline.js';
import type { PipelineDeps } from './deps.js';
import type { IrFinishReason, IrUsage, WireFormat } from '../translate/ir.js';
import type { Target } from '../providers/target.js';

/**
 * One call as the executor and the usage recorder see it, whatever the endpoint: the client's format (the
 * format its body is read in), its parsed body, the model it named and the route it came in on.
 */
export interface ProxyCall {
  clientFormat: WireFormat;
  raw: Record<string, unknown>;
  model: string;
  stream: boolean;
  endpoint: string;
  /** The transport when it is not plain HTTP (`websocket`: the Responses WebSocket); noted in the usage row. */
  transport?: 'websocket';
  /** Set once an outcome of this call was recorded (a usage row exists or is on its way). */
  recorded?: boolean;
}

/** Everything known about one attempt at one target, for usage, logs and events. */
export interface Outcome {
  traceId: string;
  call: ProxyCall;
  target: Target;
  auth: AuthInfo;
  /** performance.now() at the start of the request. */
  t0: number;
  status: number;
  usage?: Partial<IrUsage>;
  finishReason?: IrFinishReason;
  error?: string;
  streamed?: boolean;
  /** Time spent waiting on the upstream (whole reply, or until the stream committed), ms. */
  upstreamMs?: number;
  /** The combo the request was addressed to, when it was. */
  combo?: string;
  /** Facts request stages left for the usage row (compression applied, guardrail findings, cache hit...). */
  notes?: Record<string, unknown>;
  /** Client headers kept for the request log (sanitized and capped by the usage recorder). */
  client?: { userAgent?: string | null; forwardedFor?: string | null };
  /** The client's session (X-Router-Session), when it sent one. */
  session?: string;
  /** The reply's text, only when the upstream reported no usage (so output tokens can be estimated). */
  outputText?: string;
  /**
   * The cost in USD when the endpoint prices the reply itself (images per picture, audio per second or
   * character: families/pricing.ts); the row then takes it as is and no tokens are estimated. Null: the
   * endpoint knows no price for the model (the row is unpriced).
   */
  costUsd?: number | null;
  /** The model the upstream's reply names (chat replies), for the served-model check; empty or missing when it named none. */
  servedModel?: string;
}

/** Records the end of an attempt: never throws, never blocks the reply. */
export function recordOutcome(services: Pick<PipelineDeps, 'usage'>, o: Outcome): void {
  try {
    o.call.recorded = true;
    // Builds the usage row, prices it and queues it (written in batches off the request path), then emits
    // request.completed / request.failed and feeds the live channel. O(1), no disk I/O (src/daemon/usage/).
    services.usage.recordOutcome(o);
  } catch {
    // recording must never break a reply
  }
}
