import type { AuthInfo } from '../auth/pipeline.js';
import { HEADER } from '../../shared/headers.js';
import { asRouterError, RouterError } from '../http/errors.js';
import { allFailedError, attemptFailed, attemptSucceeded } from '../resilience/attempts.js';
import { circuitOpenError } from '../routing/errors.js';
import type { PipelineDeps } from './deps.js';
import type { Outcome, ProxyCall } from './outcome.js';
import { planTargets, type Plan } from './plan.js';
import type { Target } from '../providers/target.js';
import { fitContext } from './context-fit.js';
import { AttemptError, networkAttemptError } from './upstream-error.js';
import type { AttemptLimits } from './attempt-guard.js';
import { HedgeRace, hedgeLostError, type RaceEntry } from './hedge.js';
import { freshTarget } from '../oauth/fresh.js';
import type { HeaderGetter } from '../routing/conversation.js';
import { Reply } from './reply.js';

/**
 * The one executor every upstream call goes through: chat in each client format, legacy completions,
 * embeddings, count_tokens and the memory engine's own model calls. It owns the policy (resolve the model,
 * key scopes and quotas, plan the targets, admit through breakers and cooldowns, per-target timeout and
 * the request deadline, failover on the classified failure, usage rows and events, the client's error);
 * each endpoint brings only what differs, as an {@link ExecPolicy}: how to prepare and send one attempt
 * and how to hand the last failure to its caller.
 */

/** Who is asking and for what; one per request. */
export interface ExecRequest {
  services: PipelineDeps;
  auth: AuthInfo;
  call: ProxyCall;
  traceId: string;
  /** performance.now() at the start of the request. */
  t0: number;
  /** The session affinity key (X-Router-Session-Id / X-Router-Session), when the client sent one. */
  sessionKey?: string;
  /** The client's headers, read for a conversation's markers under a combo's cache affinity (routing/conversation.ts). */
  requestHeaders?: HeaderGetter;
  /** The relay route: its own per-minute limits per key and per client address. */
  relay?: boolean;
  /** The client's W3C traceparent header (OpenTelemetry tracing honours it when on). */
  traceparent?: string | null;
  /** Client headers kept for the request log. */
  client?: Outcome['client'];
  /**
   * The model is router's choice made for the caller (a guardrail's moderation model), not the caller's:
   * the key's `model:` scopes do not apply; its quotas and usage rows do.
   */
  routerChosenModel?: boolean;
  /**
   * Only the planned targets this accepts are tried (router's own calls bound to a provider or to one
   * account: a native batch is polled on the account that holds it).
   */
  only?: (target: Target) => boolean;
}

/** A reply ready without calling the upstream (a cache hit, a local token count). */
export interface EarlyReply<R> {
  early: R;
}

/** What an endpoint hands the executor. `P` is one prepared attempt, `R` the endpoint's reply. */
export interface ExecPolicy<P, R> {
  /**
   * Builds the request for one target. Throws a RouterError to refuse it: a target-specific one (see
   * {@link isTargetSpecific}) skips the target inside a combo, any other refuses the request.
   */
  prepare(target: Target, outcome: Outcome): Promise<P | EarlyReply<R>> | P | EarlyReply<R>;
  /**
   * Sends one prepared attempt and reads the reply. Throws an AttemptError on failure. On success it
   * completes `outcome` and records it (through its {@link Reply}), now or when its stream ends.
   */
  attempt(target: Target, prepared: P, outcome: Outcome, limits: AttemptLimits): Promise<R>;
  /** The caller's reply once every target failed with an upstream error (`last`, on `prepared`). */
  fail(last: AttemptError, prepared: P): R;
  /** Per-target timeout when the combo sets none (ms); default none (the request deadline still holds). */
  targetTimeoutMs?: number;
  /**
   * The attempts claim a hedged request's race before their first byte goes out (AttemptLimits.race):
   * only such endpoints are hedged under a combo's `hedgeAfterMs`; others try one target at a time.
   */
  hedges?: boolean;
  /** The request's estimated input tokens, for a combo's context fit (endpoints without it are not fitted). */
  inputTokens?(): Promise<number>;
  /** The request's reply side, which records every outcome (refusals, failed attempts too); default a plain one. */
  reply?: Reply;
}

/** Time that must be left before the request deadline for another attempt to start, ms. */
const MIN_ATTEMPT_MS = 25;

/** The identity of the memory engine's own calls (no API key: no scopes, no quotas of a key). */
export const INTERNAL_AUTH: AuthInfo = { via: 'none', loopback: true, remoteAddress: '' };

const TARGET_SPECIFIC_PARAMS = new Set(['tools', 'previous_response_id', 'conversation', 'prompt', 'background', 'n', 'best_of']);

/** A 400 that only this target causes, so another target of a combo may still serve the request. */
export function isTargetSpecific(err: unknown): boolean {
  if (!(err instanceof RouterError) || err.status !== 400) return false;
  // endpoint_not_supported: a provider without the endpoint (endpoint families: families/util.ts requireEndpoint).
  if (err.code === 'context_length_exceeded' || err.code === 'endpoint_not_supported') return true;
  const param = err.extra?.param;
  return typeof param === 'string' && TARGET_SPECIFIC_PARAMS.has(param);
}

/**
 * Runs one request through its targets. A target that fails before any byte reached the client is
 * followed by the next one when the failure says another might succeed; when all fail, the caller gets
 * the error the spec names for the case (combo 502, all accounts unavailable, or the upstream's own).
 * A request refused before any attempt (unknown model, scope, quota, open circuits, cooling accounts, a
 * stage's block) still gets its usage row, with the status the client got.
 */
export async function execute<P, R>(req: ExecRequest, policy: ExecPolicy<P, R>): Promise<R> {
  const planned: { plan?: Plan } = {};
  const { call, traceId } = req;
  req.services.tracing?.begin({ traceId, endpoint: call.endpoint, model: call.model, stream: call.stream, traceparent: req.traceparent ?? null, raw: call.raw });
  try {
    return await run(req, policy, planned);
  } catch (thrown) {
    const err = asRouterError(thrown);
    // A request that served nothing gives its budget reservation back (served ones settle from their row).
    req.services.quotas.release(traceId);
    req.services.tracing?.settle(traceId, { status: err instanceof RouterError ? err.status : 500, message: (err as Error).message ?? String(err) });
    if (err instanceof RouterError) {
      if (!req.call.recorded) (policy.reply ?? new Reply(req)).refused(planned.plan, err);
      // The error reply carries this request's trace id (the one of its log row and capture).
      err.headers = { ...err.headers, [HEADER.traceId]: req.traceId };
    }
    throw err;
  }
}

/** What one request's attempts share: the plan, the limits, and what the failed ones left. */
interface Run<P, R> {
  req: ExecRequest;
  policy: ExecPolicy<P, R>;
  reply: Reply;
  plan: Plan;
  deadline: number;
  targetTimeout: number;
  firstByteMs: number;
  last?: { error: AttemptError; prepared: P };
  refused?: RouterError;
  skipped?: RouterError;
}

/** One target ready to be sent. */
interface Ready<P> {
  index: number;
  target: Target;
  prepared: P;
  outcome: Outcome;
}

async function run<P, R>(req: ExecRequest, policy: ExecPolicy<P, R>, planned: { plan?: Plan }): Promise<R> {
  const { services, auth, call } = req;
  if (typeof call.model === 'string' && !req.routerChosenModel) services.quotas.allowedModel(auth, call.model);
  let plan = planTargets(services, call.model, req.sessionKey, req);
  if (req.only && !plan.unavailable) {
    plan = { ...plan, targets: plan.targets.filter(req.only) };
    if (plan.targets.length === 0) throw new RouterError(503, `No account that may serve this call is available for '${call.model}'.`, { code: 'no_target' });
  }
  planned.plan = plan;
  if (plan.unavailable) throw plan.unavailable;
  if (plan.combo?.contextFit && policy.inputTokens) await fitContext(services, plan, call.raw, policy.inputTokens);
  const first = plan.targets[0]!;
  // A promise only with Redis (cluster-wide limits, one round trip); on one machine nothing is awaited.
  const admitted = services.quotas.admit(auth, {
    provider: first.provider.id,
    model: first.model,
    relay: req.relay === true,
    clientIp: auth.remoteAddress,
    budget: auth.key?.budget ? { traceId: req.traceId, call } : undefined,
  });
  if (admitted) await admitted;
  const { requestDeadlineMs, upstreamFirstByteTimeoutMs } = services.settings.get();
  const r: Run<P, R> = {
    req,
    policy,
    reply: policy.reply ?? new Reply(req),
    plan,
    deadline: req.t0 + requestDeadlineMs,
    targetTimeout: plan.combo?.targetTimeoutMs ?? policy.targetTimeoutMs ?? Infinity,
    firstByteMs: upstreamFirstByteTimeoutMs,
  };
  const hedgeMs = plan.combo?.hedgeAfterMs;
  if (hedgeMs != null && policy.hedges && plan.targets.length > 1) return hedged(r, hedgeMs);

  for (let index = 0; index < plan.targets.length; index++) {
    const left = r.deadline - performance.now();
    // An attempt is not started in the deadline's last moments: the previous attempt's timer may fire a
    // hair before the deadline by this clock, and a quick upstream would then be asked with nothing left.
    if (left < MIN_ATTEMPT_MS) break;
    const a = await ready(r, index);
    if (a === undefined) continue;
    if (isEarly<R>(a)) return a.early;
    const tAttempt = performance.now();
    try {
      const reply = await policy.attempt(a.target, a.prepared, a.outcome, limitsFor(r, index, left));
      attemptSucceeded(services, plan, a.target, performance.now() - tAttempt, index, plan.session);
      return reply;
    } catch (thrown) {
      if (!failed(r, a, thrown)) break;
    }
  }
  return allFailed(r);
}

/** The limits of the attempt at target `index`, `left` ms before the request's deadline. */
function limitsFor<P, R>(r: Run<P, R>, index: number, left: number): AttemptLimits {
  const limits: AttemptLimits = { firstByteMs: r.firstByteMs, totalMs: Math.min(r.targetTimeout, left) };
  const mode = r.plan.combo?.midStreamRecovery;
  if (mode) limits.recovery = { mode, rest: r.plan.targets.slice(index + 1), plan: r.plan };
  return limits;
}

/**
 * Gets target `index` ready: its token renewed, its request prepared, its breaker's gate passed. Undefined
 * when it is skipped (its circuit is open, or it cannot take this request inside a combo).
 */
async function ready<P, R>(r: Run<P, R>, index: number): Promise<Ready<P> | EarlyReply<R> | undefined> {
  const { services, auth } = r.req;
  const { plan, policy } = r;
  const candidate = plan.targets[index]!;
  const breakers = services.resilience.breakers;
  if (index > 0 && !breakers.peek(candidate.provider.id, candidate.model).allowed) return undefined;
  // An OAuth token about to expire is renewed first (one refresh shared by concurrent requests).
  const target = await freshTarget(services, candidate);
  if (index > 0) services.quotas.checkTokens(auth, { provider: target.provider.id, model: target.model });
  const outcome = newOutcome(r.req, target, plan);
  let prepared: P | EarlyReply<R>;
  try {
    prepared = await policy.prepare(target, outcome);
  } catch (thrown) {
    const err = asRouterError(thrown);
    // A target that cannot take this request (tools to a no-tool provider, stored state another format
    // cannot hold, a context it cannot fit) is skipped inside a combo; any other refusal (a guardrail
    // block, a bad request) stands for every target.
    if (plan.combo && plan.targets.length > 1 && isTargetSpecific(err)) {
      r.skipped = err as RouterError;
      return undefined;
    }
    throw err;
  }
  if (isEarly<R>(prepared)) return prepared;
  // The breaker gate, right before the call: takes the half-open probe slot only for a target really tried.
  const gate = breakers.check(target.provider.id, target.model);
  if (!gate.allowed) {
    r.refused ??= circuitOpenError(services.providers.label(target.provider.id), gate.retryAfterSeconds, gate.model);
    return undefined;
  }
  return { index, target, prepared, outcome };
}

/**
 * The bookkeeping of a failed attempt (breaker, cooldown, its usage row); whether another target may
 * follow. A refusal that stands for every target, or the client leaving, is thrown.
 */
function failed<P, R>(r: Run<P, R>, a: Ready<P>, thrown: unknown): boolean {
  const { services } = r.req;
  const err = asRouterError(thrown);
  if (err instanceof RouterError) throw err;
  const error = err instanceof AttemptError ? err : networkAttemptError(err, false);
  const { target, outcome } = a;
  error.origin = { provider: services.providers.label(target.provider.id), connection: target.connectionId && (services.connections.get(target.connectionId)?.name ?? target.connectionId) };
  // A client that left says nothing about the provider: no breaker, no cooldown, no next target.
  if (error.kind !== 'client_gone') attemptFailed(services, target, error);
  r.reply.failed(outcome, error);
  if (error.kind === 'client_gone') throw new RouterError(499, error.message, { code: 'client_closed_request' });
  r.last = { error, prepared: a.prepared };
  return error.failure.retryable;
}

/** The caller's error once no target served. */
function allFailed<P, R>(r: Run<P, R>): R {
  const { last, plan } = r;
  if (!last) throw r.refused ?? r.skipped ?? new RouterError(503, `No target of '${r.req.call.model}' could be tried.`);
  const all = allFailedError(r.req.services, plan, last.error);
  if (all) throw all;
  r.req.services.quotas.release(r.req.traceId);
  return r.policy.fail(last.error, last.prepared);
}

/** How a hedged attempt ended. */
type Settled<P, R> = { a: Ready<P>; entry: RaceEntry; ms: number } & ({ ok: true; reply: R } | { ok: false; thrown: unknown });

const HEDGE_DUE = Symbol('hedge due');

/**
 * A combo's hedged request (`hedgeAfterMs`): the first target is sent; when it has sent no byte within
 * `hedgeMs`, the next one starts too, and the first to be ready for the client is served while the other
 * is cancelled at once (hedge.ts: its exchange aborted, its usage row recorded as cancelled, nothing
 * billed). A failed attempt is followed by the next target at once when none is left running, as without
 * hedging; at most two run side by side.
 */
async function hedged<P, R>(r: Run<P, R>, hedgeMs: number): Promise<R> {
  const { services } = r.req;
  const { plan } = r;
  const race = new HedgeRace();
  const running = new Map<RaceEntry, Promise<Settled<P, R>>>();
  let next = 0;
  let stop = false;

  /** Sends the next target that can be tried: true when one was sent, false when none is left. */
  const launch = async (): Promise<boolean | EarlyReply<R>> => {
    while (next < plan.targets.length && !race.decided) {
      const left = r.deadline - performance.now();
      if (left < MIN_ATTEMPT_MS) return false;
      const a = await ready(r, next++);
      if (a === undefined) continue;
      if (isEarly<R>(a)) return a;
      // The running attempt won while this one was being prepared: it is not sent.
      if (race.decided) return false;
      const entry = race.enter(() => r.reply.failed(a.outcome, hedgeLostError(), { hedge: 'cancelled' }));
      const t = performance.now();
      const limits = limitsFor(r, a.index, left);
      limits.race = entry;
      running.set(
        entry,
        r.policy.attempt(a.target, a.prepared, a.outcome, limits).then(
          (reply): Settled<P, R> => ({ a, entry, ms: performance.now() - t, ok: true, reply }),
          (thrown: unknown): Settled<P, R> => ({ a, entry, ms: performance.now() - t, ok: false, thrown }),
        ),
      );
      return true;
    }
    return false;
  };

  try {
    for (;;) {
      if (running.size === 0) {
        if (stop) break;
        const sent = await launch();
        if (isEarly<R>(sent)) return sent.early;
        if (!sent) break;
        continue;
      }
      // One attempt running and another target left: the hedge is due after hedgeMs without a byte.
      let timer: NodeJS.Timeout | undefined;
      const due =
        running.size === 1 && !stop && next < plan.targets.length
          ? new Promise<typeof HEDGE_DUE>((resolve) => {
              timer = setTimeout(resolve, hedgeMs, HEDGE_DUE);
            })
          : undefined;
      const waiting: Array<Promise<Settled<P, R> | typeof HEDGE_DUE>> = [...running.values()];
      if (due) waiting.push(due);
      const ev = await Promise.race(waiting);
      clearTimeout(timer);
      if (ev === HEDGE_DUE) {
        const sent = await launch();
        if (isEarly<R>(sent)) return sent.early;
        continue;
      }
      running.delete(ev.entry);
      if (ev.ok) {
        attemptSucceeded(services, plan, ev.a.target, ev.ms, ev.a.index, plan.session);
        return ev.reply;
      }
      // Cancelled because another attempt won: recorded when it lost.
      if (ev.entry.lost) continue;
      ev.entry.leave();
      if (!failed(r, ev.a, ev.thrown)) stop = true;
    }
  } finally {
    // A refusal that stands or a client that left ends the request: what still runs is cancelled.
    race.end();
  }
  return allFailed(r);
}

function isEarly<R>(p: unknown): p is EarlyReply<R> {
  return typeof p === 'object' && p !== null && 'early' in p;
}

/**
 * One shape for every outcome (all fields present), completed in place when the attempt ends: the usage
 * recorder reads the same hidden class on every request.
 */
function newOutcome(req: ExecRequest, target: Target, plan: Plan): Outcome {
  return {
    traceId: req.traceId,
    call: req.call,
    target,
    t0: req.t0,
    auth: req.auth,
    status: 0,
    usage: undefined,
    finishReason: undefined,
    error: undefined,
    streamed: false,
    upstreamMs: undefined,
    combo: plan.combo?.name,
    notes: undefined,
    client: req.client,
    session: plan.session,
    outputText: undefined,
    costUsd: undefined,
    servedModel: undefined,
  };
}
