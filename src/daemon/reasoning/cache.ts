import { createHash } from 'node:crypto';
import type { RedactedThinkingPart, SignatureIssuer, ThinkingPart } from '../translate/ir.js';

export type ReasoningPart = ThinkingPart | RedactedThinkingPart;

/** One assistant turn's reasoning, keyed by the tool calls that turn produced. */
export interface ReasoningEntry {
  id: string;
  /** The provider family that signed it: it is re-inserted only into requests to that family. */
  issuer: SignatureIssuer;
  providerId: string;
  model: string;
  toolCallIds: string[];
  parts: ReasoningPart[];
  bytes: number;
  createdAt: number;
  lastUsedAt: number;
  hits: number;
}

export interface ReasoningLimits {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
}

function partBytes(p: ReasoningPart): number {
  return p.type === 'thinking' ? p.text.length + (p.signature?.length ?? 0) : p.data.length;
}

/**
 * Reasoning (thinking text and signatures) of assistant turns that ended in tool calls, in memory, bounded
 * by entries, bytes and age (least recently used evicted first). A Map keeps insertion order, and a hit
 * re-inserts its entry, so the first key is always the least recently used.
 */
export class ReasoningCache {
  private readonly entries = new Map<string, ReasoningEntry>();
  private readonly byToolCall = new Map<string, string>();
  private totalBytes = 0;
  private counters = { hits: 0, misses: 0, stores: 0, evictions: 0 };

  constructor(
    private readonly limits: () => ReasoningLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Stores the reasoning of a reply that made these tool calls (replacing an older entry of the same calls). */
  put(issuer: SignatureIssuer, providerId: string, model: string, toolCallIds: string[], parts: ReasoningPart[]): ReasoningEntry | undefined {
    if (toolCallIds.length === 0 || parts.length === 0) return undefined;
    const id = createHash('sha256').update(`${issuer}\n${toolCallIds.join('\n')}`).digest('hex').slice(0, 24);
    this.remove(id);
    const t = this.now();
    const entry: ReasoningEntry = {
      id,
      issuer,
      providerId,
      model,
      toolCallIds: [...toolCallIds],
      parts: parts.map((p) => ({ ...p })),
      bytes: parts.reduce((n, p) => n + partBytes(p), 0),
      createdAt: t,
      lastUsedAt: t,
      hits: 0,
    };
    const { maxBytes } = this.limits();
    if (entry.bytes > maxBytes) return undefined;
    this.entries.set(id, entry);
    for (const tc of toolCallIds) this.byToolCall.set(tc, id);
    this.totalBytes += entry.bytes;
    this.counters.stores++;
    this.evict();
    return entry;
  }

  /** The reasoning of the turn that made this tool call, when held and not expired. */
  lookup(toolCallId: string): ReasoningEntry | undefined {
    const id = this.byToolCall.get(toolCallId);
    const entry = id === undefined ? undefined : this.entries.get(id);
    if (!entry) {
      this.counters.misses++;
      return undefined;
    }
    const t = this.now();
    if (t - entry.createdAt > this.limits().ttlMs) {
      this.remove(entry.id);
      this.counters.misses++;
      return undefined;
    }
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
    entry.lastUsedAt = t;
    entry.hits++;
    this.counters.hits++;
    return entry;
  }

  remove(id: string): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    this.entries.delete(id);
    for (const tc of entry.toolCallIds) if (this.byToolCall.get(tc) === id) this.byToolCall.delete(tc);
    this.totalBytes -= entry.bytes;
    return true;
  }

  clear(): number {
    const n = this.entries.size;
    this.entries.clear();
    this.byToolCall.clear();
    this.totalBytes = 0;
    return n;
  }

  private evict(): void {
    const { maxEntries, maxBytes, ttlMs } = this.limits();
    const t = this.now();
    for (const [id, e] of this.entries) {
      if (this.entries.size <= maxEntries && this.totalBytes <= maxBytes && t - e.createdAt <= ttlMs) break;
      this.remove(id);
      this.counters.evictions++;
    }
  }

  get(id: string): ReasoningEntry | undefined {
    return this.entries.get(id);
  }

  list(): ReasoningEntry[] {
    return [...this.entries.values()].reverse();
  }

  stats() {
    const l = this.limits();
    return { entries: this.entries.size, bytes: this.totalBytes, maxEntries: l.maxEntries, maxBytes: l.maxBytes, ttlSeconds: Math.round(l.ttlMs / 1000), ...this.counters };
  }
}
