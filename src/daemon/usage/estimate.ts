import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { getClientCodec } from '../translate/registry.js';
import type { IrRequest, WireFormat } from '../translate/ir.js';
import { countPieces, heuristicCount } from './token-count.js';
import { tokenizer } from '../tokenizer.js';

/** Per-message framing tokens the chat formats add (same allowance as /v1/messages/count_tokens). */
const PER_MESSAGE = 3;

/** Keys whose string values are never prompt text (ids, enums, URLs, inline media). */
const SKIP_KEYS = new Set(['model', 'role', 'type', 'id', 'url', 'image_url', 'data', 'mime_type', 'mimeType', 'media_type', 'file_id', 'signature']);

/**
 * The prompt text of a client request, for token estimation: decoded through the client format's codec
 * (system, messages, tool calls and results, tool definitions; media is left out). A body the codec
 * rejects falls back to every string value of the JSON that looks like text.
 */
export function requestText(format: WireFormat, raw: Record<string, unknown>, model: string): { text: string; messages: number } {
  try {
    const ir =
      format === 'gemini'
        ? getClientCodec('gemini').decodeRequest({ ...raw, model, stream: false })
        : getClientCodec(format).decodeRequest(raw);
    return irText(ir);
  } catch {
    const parts: string[] = [];
    collectStrings(raw, parts, 0);
    return { text: parts.join('\n'), messages: 1 };
  }
}

function irText(ir: IrRequest): { text: string; messages: number } {
  const parts: string[] = ir.system.map((p) => p.text);
  for (const msg of ir.messages) {
    for (const part of msg.parts) {
      if (part.type === 'text' || part.type === 'thinking' || part.type === 'refusal') parts.push(part.text);
      else if (part.type === 'tool_call') parts.push(`${part.name} ${part.arguments}`);
      else if (part.type === 'tool_result') for (const c of part.content) if (c.type === 'text') parts.push(c.text);
    }
  }
  if (ir.messages.length === 0 && ir.legacy?.prompt) parts.push(ir.legacy.prompt);
  if (ir.tools?.length) parts.push(JSON.stringify(ir.tools));
  return { text: parts.join('\n'), messages: Math.max(1, ir.messages.length) };
}

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 32) return;
  if (typeof value === 'string') {
    // Long strings without spaces are media or ids, not prompt text.
    if (value.length < 512 || /\s/.test(value.slice(0, 512))) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, out, depth + 1);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (!SKIP_KEYS.has(k)) collectStrings(v, out, depth + 1);
  }
}

/** Tokens of a request's prompt text plus per-message framing. */
export function promptTokens(count: number, messages: number): number {
  return count + PER_MESSAGE * messages;
}

type Pending = { resolve: (counts: number[]) => void; reject: (err: Error) => void };

/**
 * Counts tokens off the request path: in a worker thread when the compiled worker is available (the
 * daemon), otherwise in this thread in slices with a yield to the event loop between them (in-process
 * tests). The tokenizer is loaded on first use either way.
 */
export class TokenEstimator {
  private worker?: Worker;
  private workerFailed = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;

  constructor(private readonly workerUrl: URL = new URL('./estimate-worker.js', import.meta.url)) {}

  /** Token counts of each text. Never rejects: a failure falls back to about four characters per token. */
  async count(texts: string[]): Promise<number[]> {
    if (this.closed) return texts.map(heuristicCount);
    const worker = this.ensureWorker();
    if (worker) {
      try {
        return await this.viaWorker(worker, texts);
      } catch {
        // the worker died: fall through to this thread
      }
    }
    try {
      return await this.inThread(texts);
    } catch {
      return texts.map(heuristicCount);
    }
  }

  /** Stops the worker; later counts use the heuristic. */
  close(): void {
    this.closed = true;
    for (const p of this.pending.values()) p.reject(new Error('estimator closed'));
    this.pending.clear();
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private ensureWorker(): Worker | undefined {
    if (this.worker || this.workerFailed) return this.worker;
    try {
      if (this.workerUrl.protocol !== 'file:' || !existsSync(fileURLToPath(this.workerUrl))) throw new Error('no compiled worker');
      const worker = new Worker(this.workerUrl);
      worker.unref();
      worker.on('message', (msg: { id: number; counts: number[] }) => {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        p?.resolve(msg.counts);
      });
      const fail = (err: Error) => {
        this.workerFailed = true;
        this.worker = undefined;
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      };
      worker.on('error', fail);
      worker.on('exit', () => fail(new Error('estimator worker exited')));
      this.worker = worker;
    } catch {
      this.workerFailed = true;
    }
    return this.worker;
  }

  private viaWorker(worker: Worker, texts: string[]): Promise<number[]> {
    const id = this.nextId++;
    return new Promise<number[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts });
    });
  }

  private async inThread(texts: string[]): Promise<number[]> {
    const { countTokens: count } = await tokenizer();
    const out: number[] = [];
    for (const text of texts) {
      let total = 0;
      for (const piece of countPieces(text)) {
        if (piece.trim()) total += count(piece);
        if (piece.length > 1024) await new Promise<void>((r) => setImmediate(r));
      }
      out.push(total);
    }
    return out;
  }
}
