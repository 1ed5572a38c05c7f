import OpenAI, { toFile } from 'openai';
import type { RouterProcess } from '../support/router-daemon.js';

/** A batch input line for `/v1/chat/completions`. */
export function chatLine(customId: string, model: string, text: string, extra: Record<string, unknown> = {}) {
  return { custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }], ...extra } };
}

export function jsonl(lines: unknown[]): string {
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** The official SDK pointed at the daemon (no retries: every error is seen as it is). */
export function sdk(router: RouterProcess, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
}

/** Uploads a JSONL text with `client.files.create`. */
export async function upload(client: OpenAI, text: string, name = 'batch.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'batch' });
}

/** Polls a batch until `done` holds (default: a final status). */
export async function waitBatch(client: OpenAI, id: string, done?: (b: OpenAI.Batches.Batch) => boolean, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  const test = done ?? ((b) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status));
  for (;;) {
    const b = await client.batches.retrieve(id);
    if (test(b)) return b;
    if (Date.now() > until) throw new Error(`batch ${id} still ${b.status} (${JSON.stringify(b.request_counts)}) after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The lines of a file, parsed (client.files.content). */
export async function fileLines(client: OpenAI, id: string | null | undefined): Promise<any[]> {
  if (!id) return [];
  const text = await (await client.files.content(id)).text();
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** The text of a chat message's user turn, as the mock received it. */
export function userText(body: any): string | undefined {
  const m = body?.messages?.[0];
  return typeof m?.content === 'string' ? m.content : m?.content?.[0]?.text;
}
