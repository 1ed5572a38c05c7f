import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';

/** Folder holding the recorded cassettes (`openai/`, `anthropic/llm-anthropic/`, `anthropic/pydantic-ai/`). */
export const RECORDED_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/recorded');

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  json?: unknown;
}

export interface RecordedResponse {
  status: number;
  /** Lower-cased header name -> value (repeated values joined with `, `). */
  headers: Record<string, string>;
  body: string;
  isStream: boolean;
}

export interface RecordedInteraction {
  request: RecordedRequest;
  response: RecordedResponse;
}

const cache = new Map<string, RecordedInteraction[]>();

/**
 * Reads a go-vcr (`version: 2`) or vcrpy (`version: 1`) cassette into one shape.
 * `relPath` is relative to test/fixtures/recorded, e.g. `openai/chat-streaming.yaml` (absolute paths work too).
 */
export function loadRecording(relPath: string): RecordedInteraction[] {
  const hit = cache.get(relPath);
  if (hit) return hit;
  // yaml-1.1 because both recorders wrote YAML 1.1 (PyYAML, go-yaml), and it knows `!!binary`.
  const doc = parse(readFileSync(resolve(RECORDED_DIR, relPath), 'utf8'), { schema: 'yaml-1.1' }) as any;
  if (!doc || !Array.isArray(doc.interactions)) throw new Error(`${relPath}: no interactions`);
  const version = Number(doc.version);
  const list = doc.interactions.map((it: any, i: number) => {
    try {
      return version === 2 ? fromGoVcr(it) : fromVcrpy(it);
    } catch (err) {
      throw new Error(`${relPath} interaction ${i}: ${(err as Error).message}`);
    }
  });
  cache.set(relPath, list);
  return list;
}

function fromGoVcr(it: any): RecordedInteraction {
  const reqBody = bodyText(it.request.body);
  return {
    request: {
      method: String(it.request.method),
      url: String(it.request.url),
      headers: headerMap(it.request.headers),
      body: reqBody === '' ? undefined : reqBody,
      ...jsonOf(reqBody),
    },
    response: response(Number(it.response.code), it.response.headers, bodyText(it.response.body)),
  };
}

function fromVcrpy(it: any): RecordedInteraction {
  const req = it.request;
  const reqBody = req.parsed_body !== undefined ? JSON.stringify(req.parsed_body) : bodyText(req.body);
  const res = it.response;
  const resBody =
    res.parsed_body !== undefined ? JSON.stringify(res.parsed_body) : bodyText(res.body?.string ?? res.body);
  return {
    request: {
      method: String(req.method),
      url: String(req.uri),
      headers: headerMap(req.headers),
      body: reqBody === '' ? undefined : reqBody,
      ...jsonOf(reqBody),
    },
    response: response(Number(res.status?.code ?? res.status), res.headers, resBody),
  };
}

function response(status: number, rawHeaders: unknown, body: string): RecordedResponse {
  if (!Number.isInteger(status)) throw new Error('response has no status code');
  const headers = headerMap(rawHeaders);
  return { status, headers, body, isStream: (headers['content-type'] ?? '').includes('text/event-stream') };
}

function bodyText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Uint8Array) {
    // vcrpy stores undecoded bodies as !!binary; a gzip magic number means the recorder kept them compressed.
    const bytes = value[0] === 0x1f && value[1] === 0x8b ? gunzipSync(value) : value;
    return Buffer.from(bytes).toString('utf8');
  }
  return String(value);
}

function headerMap(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [name, value] of Object.entries(raw)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.map(String).join(', ') : String(value);
  }
  return out;
}

function jsonOf(text: string): { json?: unknown } {
  if (!text) return {};
  try {
    return { json: JSON.parse(text) };
  } catch {
    return {};
  }
}
