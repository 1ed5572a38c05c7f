/**
 * Memories made from conversations: extraction from one finished exchange (a model, or the built-in
 * heuristic) and summarization of old episodic memories into `semantic` ones. Both write through the engine
 * (so entries are embedded and indexed as any other) and run off the request path.
 */
import type { PipelineDeps } from '../proxy/deps.js';
import { EXTRACTION_PROMPT, heuristicExtract, parseExtraction, SUMMARY_PROMPT, type Extracted } from './extract.js';
import type { ExtractionJob } from './extraction-queue.js';
import type { StoredMemory } from './port.js';
import type { MemoryService } from './service.js';
import type { MemoryEntry, Scope } from './types.js';
import { callModel } from './upstream.js';

export interface SummarizeOptions {
  apiKeyId: Scope;
  olderThanDays?: number;
  sessionId?: string;
  dryRun?: boolean;
}

export interface SummaryResult {
  summaries: MemoryEntry[];
  archived: number;
  groups: Array<{ sessionId: string | null; count: number }>;
}

/** What extraction and summarization use of the engine. */
export interface EpisodeContext {
  engine: Pick<MemoryService, 'store' | 'settings' | 'create' | 'update'>;
  /** The request pipeline model calls go through (absent in storage-only tests). */
  services: PipelineDeps | undefined;
  closed(): boolean;
}

/** Records what one exchange taught: facts by key (updated when known), and the exchange as an episode. */
export async function extractMemories(ctx: EpisodeContext, job: ExtractionJob): Promise<void> {
  const { engine } = ctx;
  const s = engine.settings;
  let found: Extracted[];
  if (s.extractionModel && ctx.services) {
    const reply = await callModel(ctx.services, s.extractionModel, EXTRACTION_PROMPT, `User:\n${job.userText.slice(0, 8000)}\n\nAssistant:\n${job.assistantText.slice(0, 8000)}`);
    found = parseExtraction(reply);
  } else found = heuristicExtract(job.userText);
  const meta = { source: 'extraction', traceId: job.traceId, model: job.model };
  for (const f of found) {
    if (ctx.closed()) return;
    const existing = await engine.store.findByKey(job.apiKeyId, f.key, new Date());
    if (existing && existing.content.trim().toLowerCase() === f.content.trim().toLowerCase()) continue;
    if (existing && existing.type === f.type) await engine.update(existing.id, { content: f.content, metadata: { ...existing.metadata, ...meta } });
    else await engine.create({ ...f, apiKeyId: job.apiKeyId, sessionId: job.sessionId, metadata: meta });
  }
  if (s.extractEpisodes && job.userText.trim() && !ctx.closed()) {
    const clip = (t: string) => (t.length > 600 ? `${t.slice(0, 600)}...` : t);
    await engine.create({
      type: 'episodic',
      key: `exchange ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
      content: `User: ${clip(job.userText.trim())}\nAssistant: ${clip(job.assistantText.trim())}`,
      apiKeyId: job.apiKeyId,
      sessionId: job.sessionId,
      metadata: meta,
    });
  }
}

/** Episodes of one scope in groups of the same session, at most 6000 tokens and 100 entries each. */
function groupEpisodes(rows: readonly StoredMemory[]): StoredMemory[][] {
  const bySession = new Map<string | null, StoredMemory[]>();
  for (const r of rows) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r]);
  const chunks: StoredMemory[][] = [];
  for (const list of bySession.values()) {
    let cur: StoredMemory[] = [];
    let tokens = 0;
    for (const r of list) {
      if (cur.length && (tokens + r.tokens > 6000 || cur.length >= 100)) {
        chunks.push(cur);
        cur = [];
        tokens = 0;
      }
      cur.push(r);
      tokens += r.tokens;
    }
    if (cur.length) chunks.push(cur);
  }
  return chunks.filter((c) => c.length >= 2);
}

/**
 * Folds old episodic memories of one scope (per session) into `semantic` summaries written by the
 * summarization model; the originals are archived (still listed, no longer retrieved).
 */
export async function summarizeEpisodes(ctx: EpisodeContext, o: SummarizeOptions): Promise<SummaryResult> {
  const { engine } = ctx;
  const model = engine.settings.summarizationModel;
  if (!model) throw new Error('no summarization model configured (summarizationModel)');
  if (!ctx.services) throw new Error('engine has no pipeline');
  const days = o.olderThanDays ?? engine.settings.summarizeOlderThanDays;
  const before = new Date(Date.now() - days * 86_400_000);
  const groups = groupEpisodes(await engine.store.episodicBefore(o.apiKeyId, before, o.sessionId, new Date()));
  const plan = groups.map((g) => ({ sessionId: g[0]!.sessionId, count: g.length }));
  if (o.dryRun) return { summaries: [], archived: 0, groups: plan };
  const summaries: MemoryEntry[] = [];
  let archived = 0;
  for (const g of groups) {
    const listing = g.map((m) => `- [${m.createdAt}] ${m.key}: ${m.content}`).join('\n');
    const text = (await callModel(ctx.services, model, SUMMARY_PROMPT, listing, 1024)).trim();
    if (!text || ctx.closed()) continue;
    const from = g[0]!.createdAt;
    const to = g.at(-1)!.createdAt;
    const entry = await engine.create({
      type: 'semantic',
      key: `summary of ${g.length} episodes ${from.slice(0, 10)}..${to.slice(0, 10)}`,
      content: text,
      sessionId: g[0]!.sessionId,
      apiKeyId: o.apiKeyId,
      metadata: { source: 'summarization', model, summaryOf: g.map((m) => m.id), from, to },
    });
    await engine.store.archive(g.map((m) => m.seq), new Date());
    archived += g.length;
    summaries.push(entry);
  }
  return { summaries, archived, groups: plan };
}
