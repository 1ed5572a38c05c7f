import { badRequest } from '../http/errors.js';

/**
 * The batch input format (OpenAI's): one JSON object per line, `{custom_id, method: "POST", url, body}`,
 * read and checked as the upload streams in, so a bad file is refused with the line that is wrong.
 */

/** Endpoints a batch line may call (whatever the executor serves as a JSON request). */
export const BATCH_ENDPOINTS: readonly string[] = ['/v1/chat/completions', '/v1/embeddings', '/v1/completions', '/v1/responses'];

/** Lines a batch file may hold at most (OpenAI's limit). */
export const MAX_BATCH_LINES = 50_000;

/** One request of a batch input file. */
export interface BatchLine {
  custom_id: string;
  method: 'POST';
  url: string;
  body: Record<string, unknown> & { model: string };
}

/** Checks one line of a batch file; throws a 400 naming the line (1-based) and the field. */
export function parseBatchLine(text: string, index: number): BatchLine {
  const where = `Line ${index + 1} of the file`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`${where} is not valid JSON.`, 'file');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${where} is not a JSON object.`, 'file');
  const line = value as Record<string, unknown>;
  if (typeof line.custom_id !== 'string' || line.custom_id === '' || line.custom_id.length > 512) {
    throw badRequest(`${where} needs a 'custom_id' string (1 to 512 characters).`, 'file');
  }
  if (line.method !== 'POST') throw badRequest(`${where} has method ${JSON.stringify(line.method)}; only "POST" is supported.`, 'file');
  if (typeof line.url !== 'string' || !BATCH_ENDPOINTS.includes(line.url)) {
    throw badRequest(`${where} has url ${JSON.stringify(line.url)}; supported: ${BATCH_ENDPOINTS.join(', ')}.`, 'file');
  }
  const body = line.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`${where} needs a 'body' object.`, 'file');
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') throw badRequest(`${where} needs 'body.model' (a router model or combo).`, 'file');
  if (b.stream === true) throw badRequest(`${where} asks for 'stream': batch requests are not streamed.`, 'file');
  return line as unknown as BatchLine;
}

/**
 * Splits streamed text into lines and checks each as it completes: custom_id unique, at most
 * MAX_BATCH_LINES. The first bad line throws; `lines` counts the good ones.
 */
export class JsonlChecker {
  lines = 0;
  private partial = '';
  private readonly ids = new Set<string>();

  push(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop()!;
    for (const part of parts) this.line(part);
  }

  end(): void {
    if (this.partial.trim() !== '') this.line(this.partial);
    this.partial = '';
    if (this.lines === 0) throw badRequest('The file has no requests: a batch file holds one JSON request per line.', 'file');
  }

  private line(raw: string): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') throw badRequest(`Line ${this.lines + 1} of the file is empty.`, 'file');
    const line = parseBatchLine(text, this.lines);
    if (this.ids.has(line.custom_id)) throw badRequest(`Line ${this.lines + 1} of the file repeats custom_id '${line.custom_id.slice(0, 100)}'; each must be unique.`, 'file');
    this.ids.add(line.custom_id);
    this.lines++;
    if (this.lines > MAX_BATCH_LINES) throw badRequest(`The file has more than ${MAX_BATCH_LINES} lines.`, 'file');
  }
}

/** Every line of a stored (already checked) batch input file. */
export function readBatchLines(content: string): BatchLine[] {
  const out: BatchLine[] = [];
  for (const raw of content.split('\n')) {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') continue;
    out.push(parseBatchLine(text, out.length));
  }
  return out;
}
