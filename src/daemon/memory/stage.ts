import { replyText } from '../translate/util/reply-text.js';
import type { RequestStage } from '../proxy/stages.js';
import { LruMap } from '../routing/lru.js';
import { HEADER } from '../../shared/headers.js';
import type { IrRequest, IrResponse } from '../translate/ir.js';
import type { MemoryService } from './service.js';
import type { RetrievedMemory } from './types.js';

/** The stage's position: after guardrails (early), before compression and cache (late). */
export const MEMORY_STAGE_ORDER = 50;

/** Text of the last user message (what the memories are retrieved for). */
export function lastUserText(request: IrRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i]!;
    if (m.role !== 'user') continue;
    const text = m.parts
      .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
      .map((p) => p.text)
      .join('\n')
      .trim();
    if (text) return text;
  }
  return request.legacy?.prompt ?? '';
}


/** The leading system block injected into a request. */
export function memoryBlock(memories: RetrievedMemory[]): string {
  const lines = memories.map((m) => `- [${m.type}] ${m.key}: ${m.content.replace(/\s*\n\s*/g, ' ')}`);
  return [
    '<memories>',
    'Things remembered from earlier conversations with this user. Use them when they are relevant; do not mention this list.',
    ...lines,
    '</memories>',
  ].join('\n');
}

/**
 * Memory in conversations, per API key (memory_key_settings): `inject` retrieves memories relevant to the
 * last user message and prepends them as a leading system block within the key's token budget (the
 * client's own system prompt and messages are left as they are); `extract` hands the finished exchange to
 * the engine's background extraction queue (never awaited by the reply).
 */
export function memoryStage(memory: MemoryService): RequestStage {
  // One retrieval per client request: failover attempts of the same trace reuse it (hit counters once).
  const perTrace = new LruMap<string, { block: string; count: number }>(2000);
  return {
    name: 'memory',
    wants(ctx) {
      const id = ctx.auth.key?.id;
      if (!id || ctx.call.clientFormat === 'openai-completions') return false;
      const s = memory.keySettings.peek(id);
      return !!s && (s.inject || s.extract);
    },
    async onRequest(request, ctx) {
      const id = ctx.auth.key!.id;
      const s = memory.keySettings.get(id);
      if (!s.inject) return;
      let done = perTrace.get(ctx.traceId);
      if (!done) {
        const query = lastUserText(request);
        if (!query) return;
        try {
          const r = await memory.retrieve({
            query: query.slice(-4000),
            strategy: s.strategy,
            maxTokens: s.injectMaxTokens,
            limit: s.injectLimit,
            scopes: s.scope === 'key' ? [id] : s.scope === 'global' ? [null] : [id, null],
            dryRun: false,
          });
          done = { block: r.memories.length ? memoryBlock(r.memories) : '', count: r.memories.length };
        } catch (err) {
          // Memory must never break a conversation: the request goes on without it.
          ctx.services.log.warn('memory: injection skipped', { error: (err as Error).message });
          done = { block: '', count: 0 };
        }
        perTrace.set(ctx.traceId, done);
      }
      ctx.notes.memoriesInjected = done.count;
      ctx.headers['x-router-memory'] = `injected=${done.count}`;
      if (!done.block) return;
      return { ...request, system: [{ type: 'text', text: done.block }, ...request.system] };
    },
    onComplete(request, response, ctx) {
      const id = ctx.auth.key?.id;
      if (!id || !memory.keySettings.get(id).extract) return;
      const userText = lastUserText(request);
      if (!userText) return;
      // The client's session (x-router-session) groups extracted memories, e.g. for summarization.
      const session = ctx.requestHeaders?.get(HEADER.session)?.trim().slice(0, 500) || null;
      memory.enqueueExtraction({ apiKeyId: id, sessionId: session, userText, assistantText: replyText(response), traceId: ctx.traceId, model: ctx.call.model });
    },
  };
}
