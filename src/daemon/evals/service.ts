import { publicReason, RouterError } from '../http/errors.js';
import { internalChat } from '../proxy/internal-call.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { EvalCaseResult, EvalRecord, EvalRun } from '../../shared/observability.js';
import { runCheck } from './checks.js';
import type { EvalRepository } from './port.js';
import { EvalStore } from './store.js';

/** Longest wait for one model reply of an eval. */
const CALL_TIMEOUT_MS = 120_000;
/** Characters of a reply kept with its result. */
const OUTPUT_MAX = 20_000;

/**
 * Runs evals: every case against every model, through the executor (router's own calls: usage rows under
 * the endpoint `eval:<eval id>`, failover, breakers, cost), at most `concurrency` calls of a run at once,
 * one run per eval at a time. Results are stored as each call ends, so a run can be watched as it goes.
 */
export class EvalService {
  /** Runs this node is running (a run of another node is seen in storage: `isRunning`). */
  private readonly running = new Map<string, Promise<void>>();

  /** `pipeline`: the request pipeline every case is sent through (usage, failover, breakers, pricing). */
  private constructor(
    readonly store: EvalStore,
    private readonly pipeline: PipelineDeps,
  ) {}

  /** Over the evals port; `nodeId` names the runs this node starts (and the ones it interrupts at start). */
  static async create(repo: EvalRepository, nodeId: string, pipeline: PipelineDeps): Promise<EvalService> {
    return new EvalService(await EvalStore.create(repo, nodeId), pipeline);
  }

  /** True while a run of this eval is in progress, here or on another node of the cluster. */
  async isRunning(evalId: string): Promise<boolean> {
    return this.running.has(evalId) || (await this.store.isRunning(evalId));
  }

  /** Starts a run; `done` settles when every call has ended and the run is completed. */
  async start(ev: EvalRecord, models: readonly string[]): Promise<{ run: EvalRun; done: Promise<void> }> {
    if (this.running.has(ev.id)) throw new RouterError(409, `Eval '${ev.name}' is running already; wait for its run to finish.`);
    this.running.set(ev.id, Promise.resolve()); // taken now: a second start on this node waits for no write
    const services = this.pipeline;
    let run: EvalRun;
    try {
      run = await this.store.startRun(ev.id, models);
    } catch (err) {
      this.running.delete(ev.id);
      throw err;
    }
    const tasks = models.flatMap((model) => ev.cases.map((_, caseIndex) => ({ model, caseIndex })));
    let next = 0;
    const worker = async () => {
      while (next < tasks.length) {
        const task = tasks[next++]!;
        await this.store.addResult(run.id, await this.runCase(services, ev, task.model, task.caseIndex));
      }
    };
    const done = Promise.all(Array.from({ length: Math.min(ev.concurrency, tasks.length) }, worker))
      .then(() => this.store.finishRun(run.id))
      .catch(async (err: unknown) => {
        services.log.warn('eval run failed', { evalId: ev.id, runId: run.id, error: err instanceof Error ? err.message : String(err) });
        await this.store.finishRun(run.id, 'interrupted').catch(() => {});
      })
      .finally(() => this.running.delete(ev.id));
    this.running.set(ev.id, done);
    return { run, done };
  }

  private async runCase(services: PipelineDeps, ev: EvalRecord, model: string, caseIndex: number): Promise<EvalCaseResult> {
    const c = ev.cases[caseIndex]!;
    const t0 = performance.now();
    try {
      const r = await internalChat(services, {
        endpoint: `eval:${ev.id}`,
        model,
        system: c.system,
        user: c.prompt,
        maxTokens: ev.maxTokens,
        timeoutMs: CALL_TIMEOUT_MS,
      });
      const latencyMs = Math.round((performance.now() - t0) * 100) / 100;
      const checks = c.checks.map((check) => ({ type: check.type, passed: runCheck(check, r.value) }));
      const u = r.usage ?? {};
      // Every part (cache, reasoning, audio, image) priced at its own rate, as the case's usage row is.
      const usage = { ...u, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 };
      const reported = typeof u.costUsd === 'number' && Number.isFinite(u.costUsd) && u.costUsd >= 0 ? u.costUsd : undefined;
      return {
        model,
        caseIndex,
        passed: checks.every((k) => k.passed),
        checks,
        output: r.value.slice(0, OUTPUT_MAX),
        error: null,
        latencyMs,
        tokensIn: usage.inputTokens,
        tokensOut: usage.outputTokens,
        // Null when no price is known: the run's scores count it as unpriced, never as $0.
        costUsd: reported ?? services.usage.pricing.cost(r.target.provider.id, r.target.model, usage).costUsd,
        provider: services.providers.label(r.target.provider.id),
        traceId: r.traceId,
      };
    } catch (err) {
      return {
        model,
        caseIndex,
        passed: false,
        checks: c.checks.map((check) => ({ type: check.type, passed: false })),
        output: null,
        error: publicReason(err).slice(0, 1000),
        latencyMs: Math.round((performance.now() - t0) * 100) / 100,
        tokensIn: 0,
        tokensOut: 0,
        costUsd: 0,
        provider: null,
        traceId: null,
      };
    }
  }
}
