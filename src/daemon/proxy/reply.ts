import type { Readable } from 'node:stream';
import { FastResponse } from 'srvx';
import { RouterError } from '../http/errors.js';
import type { Price } from '../usage/pricing.js';
import type { WireFormat } from '../translate/ir.js';
import { CLIENT_LEFT, relayBody, type OpenReply } from './attempt.js';
import { finishOutcome, type ExecRequest } from './execute.js';
import type { Outcome } from './outcome.js';
import { attemptErrorResponse, type AttemptError } from './upstream-error.js';

/** What a served attempt tells its usage row. */
export interface ServedFacts {
  upstreamMs: number;
  usage?: { inputTokens: number; outputTokens: number };
  /** The cost from the model's price (undefined: priced by tokens). */
  cost?: (price: Price | undefined) => number | null;
  notes?: Record<string, unknown>;
  streamed?: boolean;
  /** A stream that broke after it was committed to the client. */
  error?: string;
}

/**
 * The reply side of one request, for every endpoint family: stamps every header (content type, server
 * timing, version, trace id; no-cache on a stream), records each outcome once (served whole, relayed to
 * its end or broken after commit) with its usage, cost and notes, and turns the last failure into the
 * client's error.
 */
export class Reply {
  constructor(private readonly env: ExecRequest) {}

  /** The headers of a served reply. */
  headers(contentType: string, upstreamMs: number, stream?: 'sse' | 'relay'): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': contentType,
      'server-timing': `router;dur=${Math.max(0, performance.now() - this.env.t0 - upstreamMs).toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`,
      'x-router-version': this.env.services.version,
      'x-router-trace-id': this.env.traceId,
    };
    if (stream) headers['cache-control'] = 'no-cache';
    if (stream === 'relay') headers['x-accel-buffering'] = 'no';
    return headers;
  }

  /** Records a served attempt: status 200, its upstream time, usage, cost and notes; the usage row and the caller's token budgets. */
  record(outcome: Outcome, facts: ServedFacts): void {
    outcome.status = 200;
    outcome.upstreamMs = facts.upstreamMs;
    outcome.usage = facts.usage;
    if (facts.streamed) outcome.streamed = true;
    if (facts.error) outcome.error = facts.error;
    if (facts.cost) outcome.costUsd = facts.cost(this.env.services.usage.pricing.lookup(outcome.target.provider.id, outcome.target.model));
    if (facts.notes) outcome.notes = { ...outcome.notes, ...facts.notes };
    finishOutcome(this.env.services, outcome, facts.usage);
  }

  /** A whole reply: recorded, then sent. */
  send(outcome: Outcome, body: string | Uint8Array, contentType: string, facts: ServedFacts): Response {
    this.record(outcome, facts);
    return new FastResponse(body as BodyInit, { status: 200, headers: this.headers(contentType, facts.upstreamMs, facts.streamed ? 'sse' : undefined) });
  }

  /**
   * A reply relayed to the client as it arrives; recorded when it ends (`end` reads its tail for usage).
   * A stream that broke after commit counts against the provider's circuit (not when the client left).
   */
  relay(outcome: Outcome, open: OpenReply, contentType: string, end: (tail: string, bytes: number) => Omit<ServedFacts, 'upstreamMs'>): Response {
    const upstreamMs = performance.now() - open.tSend;
    const body: Readable = relayBody(open, (error, tail, bytes) => {
      this.record(outcome, { ...end(tail, bytes), upstreamMs, streamed: true, error });
      if (error && error !== CLIENT_LEFT && !error.startsWith('The client closed')) this.env.services.resilience.breakers.recordFailure(outcome.target.provider.id, 'network');
    });
    return new FastResponse(body as unknown as ReadableStream, { status: 200, headers: this.headers(contentType, upstreamMs, 'relay') });
  }

  /** The client's reply once every target failed: the upstream's own error body when it speaks the client's format, else the standard body. */
  fail(last: AttemptError, upstreamFormat: string, clientFormat: WireFormat = 'openai-chat'): Response {
    const failure = attemptErrorResponse(last, clientFormat, upstreamFormat, this.env.services.version, this.env.traceId);
    if (failure instanceof RouterError) throw failure;
    return failure;
  }
}
