import { randomUUID } from 'node:crypto';
import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { Attempt, readWhole } from '../proxy/attempt.js';
import { execute, INTERNAL_AUTH } from '../proxy/execute.js';
import { recordOutcome, type Outcome } from '../proxy/outcome.js';
import { planTargets } from '../proxy/plan.js';
import { AttemptError } from '../proxy/upstream-error.js';
import { encodeOptionsFor, joinUrl, type Target } from '../providers/target.js';
import type { BatchDeps } from './deps.js';
import { anthropicRequests, anthropicResults, BATCH_PRICE_FACTOR, lineUsage, openaiInput, openaiResults, type NativeResult } from '../families/batch-native/codec.js';
import type { BatchLine } from './jsonl.js';
import { errorLine, ownerAuth } from './line-call.js';
import type { RunHandle } from './runner.js';
import type { BatchRepository, LineResult } from './port.js';
import { newId, nowSeconds, type BatchRow, type NativeState } from './store.js';

/**
 * Native mode: a batch whose lines all go to OpenAI, or all to Anthropic, is submitted as that provider's
 * own batch (OpenAI `/v1/files` + `/v1/batches`; Anthropic Message Batches `/v1/messages/batches`), polled
 * every `batchPollIntervalMs`, and its results mapped back into OpenAI's output format, one usage row per
 * line priced at the provider's batch rate (half the list price for both).
 */

/** Anthropic's rule for a request's custom_id. */
const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** The metadata key router sets on an OpenAI batch: its own batch id, to find the batch after a crash. */
const ROUTER_BATCH_KEY = 'router_batch_id';
/** Clock difference allowed between router and the provider when comparing creation times, seconds. */
const CLOCK_SKEW_S = 300;
/** How long a submission call may take (the `call` timeout), seconds: a batch made by it is created within. */
const CALL_TIMEOUT_S = 120;
/** Pages of a provider's batch list searched at most (100 batches each) when looking for a lost submission. */
const MAX_LIST_PAGES = 20;

/** The provider batch a set of lines can become, or why they cannot become one. */
export function nativePlan(services: BatchDeps, endpoint: string, lines: BatchLine[]): NativeState | string {
  const models = [...new Set(lines.map((l) => l.body.model))];
  let provider: string | undefined;
  let connection: string | undefined;
  for (const model of models) {
    if (services.combos.byName(model)) return `'${model}' is a combo; a provider batch goes to one provider.`;
    let target: Target | undefined;
    try {
      target = planTargets(services, model).targets[0];
    } catch {
      target = undefined;
    }
    if (!target) return `no usable connection serves '${model}'.`;
    const id = target.provider.id;
    if (id !== 'openai' && id !== 'anthropic') return `'${model}' is served by ${services.providers.label(id)}, which has no batch API router can use (OpenAI and Anthropic do).`;
    if (provider !== undefined && (provider !== id || connection !== target.connectionId)) return 'the lines name models of more than one provider or account.';
    provider = id;
    connection = target.connectionId;
  }
  if (provider === 'anthropic') {
    if (endpoint !== '/v1/chat/completions') return 'Anthropic batches serve chat completions only.';
    const bad = lines.find((l) => !ANTHROPIC_CUSTOM_ID.test(l.custom_id));
    if (bad) return `custom_id '${bad.custom_id.slice(0, 80)}' does not fit Anthropic's rule (1-64 letters, digits, '_' or '-').`;
  }
  return { provider: provider as NativeState['provider'], model: models[0]!, ...(connection ? { connectionId: connection } : {}) };
}

/** The target each model of the batch goes to (the account the plan chose when the batch was made). */
function targetsFor(services: BatchDeps, lines: BatchLine[], state: NativeState): Map<string, Target> {
  const out = new Map<string, Target>();
  for (const model of new Set(lines.map((l) => l.body.model))) {
    const plan = planTargets(services, model);
    const target = plan.targets.find((t) => t.connectionId === state.connectionId) ?? plan.targets[0];
    if (!target) throw new Error(`no usable connection serves '${model}'`);
    out.set(model, target);
  }
  return out;
}

/** A provider call that failed on every account tried; `retryable` when waiting may help (a poll tries again). */
class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** One provider call of a native batch: its method, where it goes (a path under the base URL, or a URL the provider gave), its body. */
interface ProviderCall {
  method: 'GET' | 'POST';
  path?: string;
  url?: string;
  body?: unknown;
}

/**
 * Calls the batch's provider through the executor: breakers, cooldowns and the account order apply, a
 * failure is classified once and fails over to the provider's next account when it may. The calls that
 * start a batch (`choose`) may go to any account of the provider: `onTarget` hears which one is tried, so
 * the account that holds the batch is saved before the provider could accept it. Every later call goes to
 * that account (`holder`): a provider batch and its files live on one account only.
 */
async function providerCall(services: BatchDeps, state: NativeState, op: ProviderCall, route: 'choose' | 'holder', onTarget?: (t: Target) => Promise<void>): Promise<any> {
  let payload: { body: string | Uint8Array; contentType?: string } | undefined;
  if (op.body instanceof FormData) {
    const req = new Request('http://form.invalid', { method: 'POST', body: op.body });
    payload = { body: new Uint8Array(await req.arrayBuffer()), contentType: req.headers.get('content-type')! };
  } else if (op.body !== undefined) payload = { body: JSON.stringify(op.body) };
  const what = `${op.method} ${op.url ? new URL(op.url).pathname : op.path}`;
  return execute(
    {
      services,
      auth: INTERNAL_AUTH,
      call: { clientFormat: 'openai-chat', raw: {}, model: state.model, stream: false, endpoint: `batch:${route === 'choose' ? 'submit' : 'poll'}` },
      traceId: randomUUID(),
      t0: performance.now(),
      routerChosenModel: true,
      only: (t) => t.provider.id === state.provider && (route === 'choose' || t.connectionId === state.connectionId),
    },
    {
      async prepare(t) {
        await onTarget?.(t);
        return op.url ?? joinUrl(t.baseUrl, op.path!);
      },
      async attempt(t, url, _outcome, limits) {
        const open = await new Attempt(t, limits).open({ url, method: op.method, body: payload?.body, contentType: payload?.contentType, accept: 'application/json' });
        const text = (await readWhole(open, 512 * 1024 * 1024)).bytes.toString('utf8');
        const type = open.exchange.headers['content-type'];
        if (!String(type ?? '').includes('json') || url.includes('/results') || url.endsWith('/content')) return text;
        try {
          return JSON.parse(text);
        } catch {
          throw new AttemptError(`${t.provider.id} answered ${what} with a body that is not JSON.`, 502, 'invalid');
        }
      },
      fail(last) {
        throw new ProviderError(`${state.provider} answered ${last.status} to ${what}: ${last.message.slice(0, 500)}`, last.failure.retryable);
      },
      targetTimeoutMs: CALL_TIMEOUT_S * 1000,
    },
  );
}

/** The calls of one native batch: `call` to the account holding it, `start` to the first account of the provider that takes it. */
interface Calls {
  call(op: ProviderCall): Promise<any>;
  start(op: ProviderCall): Promise<any>;
}

/** The usage row of one line a provider batch answered. */
function recordLine(services: BatchDeps, batch: BatchRow, auth: AuthInfo, line: BatchLine, target: Target, status: number, body: unknown, error?: string): void {
  const outcome: Outcome & { costFactor: number } = {
    traceId: randomUUID(),
    call: { clientFormat: 'openai-chat', raw: line.body, model: line.body.model, stream: false, endpoint: batch.endpoint },
    target,
    auth,
    t0: performance.now(),
    status,
    usage: status < 400 ? (lineUsage(body) ?? { inputTokens: 0, outputTokens: 0 }) : undefined,
    error,
    upstreamMs: 0,
    notes: { batch: batch.id, native: true },
    costFactor: BATCH_PRICE_FACTOR,
  };
  recordOutcome(services, outcome);
}

interface Submitted {
  /**
   * Sends the batch to the provider, setting `state.remoteId`; `save` persists `state` after an
   * intermediate step (OpenAI's uploaded input file), so a restart reuses it.
   */
  submit(lines: BatchLine[], targets: Map<string, Target>, batch: BatchRow, save: () => Promise<void>): Promise<void>;
  /**
   * The provider batch a run killed between submitting and saving its id had made, if any: `since` is
   * when that submission began (unix seconds).
   */
  find(batch: BatchRow, since: number): Promise<{ id: string; inputFileId?: string } | undefined>;
  /** Remote counts while it runs. */
  counts(remote: any): { completed: number; failed: number };
  ended(remote: any): boolean;
  /** Result lines by custom_id: `[ok, line]`. */
  results(remote: any): Promise<Map<string, NativeResult>>;
}

/**
 * Walks a provider's batch list newest first (OpenAI `GET /v1/batches?limit&after`, Anthropic `GET
 * /v1/messages/batches?limit&after_id`: the `BatchListParams` of the openai and @anthropic-ai/sdk packages),
 * until `stop` says a batch is older than the one sought or the list ends.
 */
async function* listBatches(calls: Calls, path: string, cursor: 'after' | 'after_id', stop: (b: any) => boolean): AsyncGenerator<any> {
  let after: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const query = `limit=100${after ? `&${cursor}=${encodeURIComponent(after)}` : ''}`;
    const list = await calls.call({ method: 'GET', path: `${path}?${query}` });
    const data = Array.isArray(list?.data) ? list.data : [];
    for (const b of data) {
      if (stop(b)) return;
      yield b;
    }
    if (!list?.has_more || data.length === 0) return;
    after = list.last_id ?? data.at(-1)?.id;
  }
}

function openai(calls: Calls, state: NativeState): Submitted {
  return {
    async submit(lines, targets, batch, save) {
      if (!state.remoteInputFileId) {
        const jsonl = openaiInput(lines, (model) => targets.get(model)!.model);
        const form = new FormData();
        form.append('purpose', 'batch');
        form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), `router-${batch.id}.jsonl`);
        const file = await calls.start({ method: 'POST', path: 'files', body: form });
        state.remoteInputFileId = file.id;
        await save();
      }
      // `metadata` (up to 16 string pairs, openai BatchCreateParams) names router's batch: found again after a crash.
      const body = { input_file_id: state.remoteInputFileId, endpoint: batch.endpoint, completion_window: '24h', metadata: { [ROUTER_BATCH_KEY]: batch.id } };
      // The file lives on the account that took it: the batch is made there too.
      const remote = await calls.call({ method: 'POST', path: 'batches', body });
      state.remoteId = remote.id;
    },
    async find(batch, since) {
      const older = (b: any) => typeof b.created_at === 'number' && b.created_at < since - CLOCK_SKEW_S;
      for await (const b of listBatches(calls, 'batches', 'after', older)) {
        if (b.metadata?.[ROUTER_BATCH_KEY] === batch.id) return { id: b.id, inputFileId: b.input_file_id };
      }
      return undefined;
    },
    counts: (remote) => ({ completed: remote.request_counts?.completed ?? 0, failed: remote.request_counts?.failed ?? 0 }),
    ended: (remote) => ['completed', 'failed', 'expired', 'cancelled'].includes(remote.status),
    async results(remote) {
      const files: string[] = [];
      for (const fileId of [remote.output_file_id, remote.error_file_id]) {
        if (fileId) files.push(await calls.call({ method: 'GET', path: `files/${fileId}/content` }));
      }
      return openaiResults(files, state.expired === true, () => newId('batch_req_'));
    },
  };
}

function anthropic(calls: Calls, state: NativeState, all: BatchLine[]): Submitted {
  const byId = new Map(all.map((l) => [l.custom_id, l]));
  return {
    async submit(lines, targets) {
      const body = {
        requests: anthropicRequests(lines, (model) => {
          const t = targets.get(model)!;
          return { model: t.model, options: encodeOptionsFor(t) };
        }),
      };
      const remote = await calls.start({ method: 'POST', path: 'messages/batches', body });
      state.remoteId = remote.id;
    },
    /**
     * A Message Batch carries no metadata, so it is recognized by when it was made (within the submission
     * call, give or take the clock skew) and its number of requests; of several, the one made nearest the
     * submission's start.
     */
    async find(_batch, since) {
      const created = (b: any) => Date.parse(b.created_at) / 1000;
      const older = (b: any) => created(b) < since - CLOCK_SKEW_S;
      let best: { id: string; distance: number } | undefined;
      for await (const b of listBatches(calls, 'messages/batches', 'after_id', older)) {
        const c = b.request_counts ?? {};
        const count = (c.processing ?? 0) + (c.succeeded ?? 0) + (c.errored ?? 0) + (c.canceled ?? 0) + (c.expired ?? 0);
        const distance = Math.abs(created(b) - since);
        if (count !== all.length || created(b) > since + CALL_TIMEOUT_S + CLOCK_SKEW_S) continue;
        if (!best || distance < best.distance) best = { id: b.id, distance };
      }
      return best && { id: best.id };
    },
    counts: (remote) => {
      const c = remote.request_counts ?? {};
      return { completed: c.succeeded ?? 0, failed: (c.errored ?? 0) + (c.canceled ?? 0) + (c.expired ?? 0) };
    },
    ended: (remote) => remote.processing_status === 'ended',
    async results(remote) {
      const op: ProviderCall = remote.results_url ? { method: 'GET', url: remote.results_url } : { method: 'GET', path: `messages/batches/${state.remoteId}/results` };
      return anthropicResults(await calls.call(op), byId, state.expired === true, () => newId('batch_req_'));
    },
  };
}

/** Test hook (docs/batch.md "Testing"): the daemon kills itself right after a provider accepted a batch, before its id is saved. */
function crashAfterSubmitForTests(): void {
  if (process.env.ROUTER_TEST_EXIT_AFTER_NATIVE_SUBMIT === '1') process.kill(process.pid, 'SIGKILL');
}

/**
 * Submits the batch to its provider exactly once across crashes: the intent (`submitting`) is saved first;
 * a run that finds it without a provider batch id looks for the batch among the provider's before it
 * submits again (a run killed between the provider's answer and the save made one already).
 */
async function submitOnce(store: BatchRepository, batch: BatchRow, lines: BatchLine[], targets: Map<string, Target>, state: NativeState, api: Submitted, handle: RunHandle): Promise<void> {
  const save = () => store.setNative(batch.id, state);
  if (state.submitting !== undefined) {
    const found = await api.find(batch, state.submitting);
    if (found) {
      state.remoteId = found.id;
      if (found.inputFileId) state.remoteInputFileId = found.inputFileId;
      return save();
    }
  }
  // Cancelled, expired or stopping before the provider has it: nothing is submitted.
  if (handle.stop !== 'none') return;
  state.submitting = nowSeconds();
  await save();
  await api.submit(lines, targets, batch, save);
  crashAfterSubmitForTests();
  await save();
}

/** The error code of a line the provider batch ended without answering. */
function unansweredCode(state: NativeState, remote: any): string {
  if (state.expired || remote.status === 'expired') return 'batch_expired';
  if (state.cancelRequested) return 'batch_cancelled';
  return 'batch_failed';
}

const UNANSWERED_TEXT: Record<string, string> = {
  batch_expired: 'This request could not be executed before the completion window expired.',
  batch_cancelled: 'The batch was cancelled before this request ran.',
  batch_failed: 'The provider batch returned no result for this request.',
};

/**
 * One poll of the provider batch; undefined when the account is cooling, its circuit open, or the provider
 * answered with a failure worth waiting out (a 429, a 5xx): the next poll tries again, and only a failure
 * that waiting cannot cure fails the batch.
 */
async function pollOnce(poll: () => Promise<any>): Promise<any> {
  try {
    return await poll();
  } catch (err) {
    if (err instanceof ProviderError && err.retryable) return undefined;
    if (err instanceof RouterError && (err.status === 429 || err.status === 503)) return undefined;
    throw err;
  }
}

/**
 * Submits (unless a previous run did) and polls the provider batch until it ends, then records every
 * line. A cancel, or router's own completion window closing, cancels the provider batch; the lines it did
 * not answer become `batch_cancelled` or `batch_expired` error lines. Returns `stopped` on shutdown (the
 * next start polls the same provider batch again).
 */
export async function runNative(
  services: BatchDeps,
  store: BatchRepository,
  batch: BatchRow,
  lines: BatchLine[],
  handle: RunHandle,
): Promise<'done' | 'expired' | 'stopped' | { failed: string }> {
  const state = JSON.parse(batch.native!) as NativeState;
  const save = () => store.setNative(batch.id, state);
  const calls: Calls = {
    call: (op) => providerCall(services, state, op, 'holder'),
    // The account tried is saved before the provider hears of the batch: a run killed mid-call searches that account.
    start: (op) =>
      providerCall(services, state, op, 'choose', async (t) => {
        if (state.connectionId === t.connectionId) return;
        state.connectionId = t.connectionId;
        await save();
      }),
  };
  let targets: Map<string, Target>;
  try {
    targets = targetsFor(services, lines, state);
  } catch (err) {
    return { failed: (err as Error).message };
  }
  const api = state.provider === 'openai' ? openai(calls, state) : anthropic(calls, state, lines);
  const path = state.provider === 'openai' ? 'batches' : 'messages/batches';
  try {
    if (!state.remoteId) {
      await submitOnce(store, batch, lines, targets, state, api, handle);
      // The account that took the batch may not be the first one planned: its lines are recorded on it.
      targets = targetsFor(services, lines, state);
    }
    if (!state.remoteId) {
      if (handle.stop === 'shutdown') return 'stopped';
      const code = handle.stop === 'expire' ? 'batch_expired' : 'batch_cancelled';
      await store.recordLines(batch.id, lines.map((line, index) => ({ line: index, ok: false, result: errorLine(line.custom_id, code, UNANSWERED_TEXT[code]!) })), false);
      return handle.stop === 'expire' ? 'expired' : 'done';
    }
    let remote: any;
    for (;;) {
      if (handle.stop === 'shutdown') return 'stopped';
      if ((handle.stop === 'cancel' || handle.stop === 'expire') && !state.cancelRequested) {
        await calls.call({ method: 'POST', path: `${path}/${state.remoteId}/cancel`, body: {} });
        state.cancelRequested = true;
        if (handle.stop === 'expire') state.expired = true;
        await save();
      }
      const polled = await pollOnce(() => calls.call({ method: 'GET', path: `${path}/${state.remoteId}` }));
      if (polled !== undefined) {
        remote = polled;
        const counts = api.counts(remote);
        await store.setCounts(batch.id, counts.completed, counts.failed);
        if (api.ended(remote)) break;
      }
      await handle.pause(services.settings.get().batchPollIntervalMs);
    }
    const results = await api.results(remote);
    let auth: AuthInfo;
    try {
      auth = ownerAuth(services.keys, batch.key_id, batch.endpoint);
    } catch {
      auth = INTERNAL_AUTH;
    }
    const missing = unansweredCode(state, remote);
    // The provider's counts are replaced by the recorded lines, all in one transaction.
    const recorded: LineResult[] = lines.map((line, index) => {
      const r = results.get(line.custom_id);
      return r ? { line: index, ok: r.ok, result: r.result } : { line: index, ok: false, result: errorLine(line.custom_id, missing, UNANSWERED_TEXT[missing]!) };
    });
    await store.recordLines(batch.id, recorded, true);
    lines.forEach((line) => {
      const r = results.get(line.custom_id);
      if (r && r.status !== 499) recordLine(services, batch, auth, line, targets.get(line.body.model)!, r.status, r.body, r.ok ? undefined : 'failed in the provider batch');
    });
    if (state.provider === 'openai' && remote.status === 'failed') return { failed: JSON.stringify(remote.errors?.data ?? []).slice(0, 1000) };
    return state.expired || remote.status === 'expired' ? 'expired' : 'done';
  } catch (err) {
    if (handle.stop === 'shutdown') return 'stopped';
    return { failed: err instanceof ProviderError ? err.message : `The provider batch could not be run: ${(err as Error).message}` };
  }
}
