import { asRouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { ReplyError, type Family, type FamilyInput, type Served, type UpstreamAsk, type UpstreamBody } from '../families/family.js';
import { Attempt, readWhole, upstreamContentType, upstreamUrl } from './attempt.js';
import { requestEnvelope, nodeSink } from './envelope.js';
import { execute } from './execute.js';
import type { Outcome } from './outcome.js';
import { Reply } from './reply.js';
import type { Target } from '../providers/target.js';
import { AttemptError } from './upstream-error.js';

/**
 * Runs one request of an endpoint family (families/registry.ts) through the executor: the client's body
 * read once by the family's codec, one envelope, then per target one upstream request encoded by the codec
 * and sent by one {@link Attempt} (the same request `copies` times at once where the provider answers fewer
 * items per call), the reply decoded by the codec (or relayed as it comes) and answered by one {@link Reply}.
 */
export async function runFamily<A>(ctx: RouteContext, family: Family<A>, input: FamilyInput): Promise<Response> {
  let ask: A;
  try {
    ask = family.read(input);
  } catch (err) {
    throw asRouterError(err);
  }
  const { model, raw, stream } = family.call(ask);
  const env = requestEnvelope(ctx, { clientFormat: 'openai-chat', raw, model, stream, endpoint: family.route.path });
  const reply = new Reply(env);
  const sink = nodeSink(ctx);
  return execute(env, {
    reply,
    prepare: (target) => ({ up: family.encode(ask, target), target }),
    attempt: (target, { up }, outcome, limits) => attemptFamily(family, ask, up, outcome, new Attempt(target, limits, sink), reply, env.traceId),
    fail: (last, { target }) => reply.fail(last, family.errorFormat?.(target) ?? 'openai-chat'),
    targetTimeoutMs: family.targetTimeoutMs,
  });
}

async function attemptFamily<A>(family: Family<A>, ask: A, up: UpstreamAsk, outcome: Outcome, attempt: Attempt, reply: Reply, traceId: string): Promise<Response> {
  const target: Target = attempt.target;
  const request = { url: upstreamUrl(target, up.path), body: up.body, contentType: up.contentType, accept: up.accept };
  const fallbackType = up.replyType ?? 'application/json';
  const copies = Math.max(1, up.copies ?? 1);
  const readOne = async (relayable: boolean) => {
    const open = await attempt.open(request);
    const contentType = upstreamContentType(open, fallbackType);
    if (relayable && family.relay?.(ask, target, contentType)) {
      return reply.relay(outcome, open, contentType, (tail, bytes) => family.relayEnd?.(ask, target, { tail, bytes }) ?? {});
    }
    const { bytes, upstreamMs } = await readWhole(open);
    return { body: { bytes, text: bytes.toString('utf8'), contentType } satisfies UpstreamBody, upstreamMs };
  };
  // One call is relayed when the codec says so; copies are always read whole, then decoded together.
  const replies = copies === 1 ? [await readOne(true)] : await Promise.all(Array.from({ length: copies }, () => readOne(false)));
  if (replies[0] instanceof Response) return replies[0];
  const whole = replies as { body: UpstreamBody; upstreamMs: number }[];
  let served: Served;
  try {
    served = family.decode(
      whole.map((r) => r.body),
      ask,
      target,
      { id: traceId, now: Math.floor(Date.now() / 1000) },
    );
  } catch (err) {
    // A reply the codec cannot read: a broken upstream, worth the next target.
    if (err instanceof ReplyError) throw new AttemptError(err.message, 502, err.reason);
    throw err;
  }
  const upstreamMs = Math.max(...whole.map((r) => r.upstreamMs));
  return reply.send(outcome, served.body, served.contentType, { ...served, upstreamMs });
}
