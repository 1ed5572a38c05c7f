import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Family, FamilyInput, FamilyTarget, MultipartBody, RelayEnd, Served, UpstreamAsk, UpstreamBody } from '../../src/daemon/families/family.js';
import type { Price } from '../../src/daemon/usage/pricing.js';

/**
 * Golden cases of the endpoint-family codecs (families/): one folder per case under
 * test/fixtures/families/<family>/<case>/ (layout: test/fixtures/families/README.md). The codecs are pure,
 * so a case runs them directly: the client's body read, the upstream request for the case's target, the
 * upstream's replies decoded (or a relayed stream's end read), each compared with the case's files.
 */

export const FAMILY_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'families');

export interface FamilyCase {
  description: string;
  target: FamilyTarget;
  /** The model's price, for the cost the case expects. */
  price?: Price;
  /** A reply relayed as it arrives: its content type and the file of its body. */
  relay?: { contentType: string; file: string };
}

/** A multipart form in a case file: fields, and files with their text or base64 content. */
interface FormFile {
  fields: [string, string][];
  files: { field: string; filename: string; mimeType: string; text?: string; base64?: string }[];
}

/** The case folders of a family, sorted. */
export function familyCases(family: string): string[] {
  const dir = join(FAMILY_FIXTURES, family);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

export function caseFile(family: string, name: string, file: string): string {
  return join(FAMILY_FIXTURES, family, name, file);
}

function json(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function toForm(f: FormFile): MultipartBody {
  return {
    fields: f.fields,
    files: f.files.map((x) => ({ field: x.field, filename: x.filename, mimeType: x.mimeType, data: x.base64 !== undefined ? Buffer.from(x.base64, 'base64') : Buffer.from(x.text ?? '') })),
  };
}

/** Parses a multipart body back into fields and files (text content), to compare with a case's form. */
export function parseForm(body: Uint8Array, contentType: string): FormFile {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const text = Buffer.from(body).toString('latin1');
  const out: FormFile = { fields: [], files: [] };
  for (const part of text.split(`--${boundary}`).slice(1, -1)) {
    const [head, ...rest] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const content = rest.join('\r\n\r\n').replace(/\r\n$/, '');
    const name = /name="([^"]*)"/.exec(head!)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head!)?.[1];
    if (filename === undefined) out.fields.push([name, Buffer.from(content, 'latin1').toString('utf8')]);
    else out.files.push({ field: name, filename, mimeType: /Content-Type: (.+)/.exec(head!)?.[1] ?? '', base64: Buffer.from(content, 'latin1').toString('base64') });
  }
  return out;
}

/** The client's body of a case: `request.json`, or a multipart form in `request.form.json`. */
export function caseInput(family: string, name: string): FamilyInput {
  const form = caseFile(family, name, 'request.form.json');
  if (existsSync(form)) return { form: toForm(json(form)) };
  return { json: json(caseFile(family, name, 'request.json')) };
}

/** The upstream request as a case file records it: JSON bodies parsed, forms parsed back. */
export function upstreamView(up: UpstreamAsk): Record<string, unknown> {
  const isForm = up.contentType.startsWith('multipart/form-data');
  const body = isForm ? undefined : typeof up.body === 'string' ? JSON.parse(up.body) : JSON.parse(Buffer.from(up.body).toString('utf8'));
  return {
    path: up.path,
    accept: up.accept,
    contentType: isForm ? 'multipart/form-data' : up.contentType,
    copies: up.copies ?? 1,
    ...(up.replyType ? { replyType: up.replyType } : {}),
    ...(isForm ? { form: parseForm(up.body as Uint8Array, up.contentType) } : { body }),
  };
}

/** The upstream replies of a case: `upstream-replies.json`, a list of `{contentType, json | text | file}`. */
export function caseReplies(family: string, name: string): UpstreamBody[] {
  const list = json(caseFile(family, name, 'upstream-replies.json')) as { contentType: string; json?: unknown; text?: string; file?: string }[];
  return list.map((r) => {
    const text = r.file !== undefined ? readFileSync(caseFile(family, name, r.file), 'utf8') : r.text !== undefined ? r.text : JSON.stringify(r.json);
    return { text, bytes: Buffer.from(text), contentType: r.contentType };
  });
}

/** What a case records of a served reply: its body (JSON parsed, SSE and text as text), type, usage, cost and notes. */
export function servedView(served: Served | RelayEnd, price: Price | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if ('body' in served) {
    const text = typeof served.body === 'string' ? served.body : Buffer.from(served.body).toString('utf8');
    out.contentType = served.contentType;
    if (served.contentType.includes('json')) out.body = JSON.parse(text);
    else out.text = text;
    out.streamed = served.streamed === true;
  }
  out.usage = served.usage ?? null;
  out.costUsd = served.cost ? served.cost(price) : 'by tokens';
  out.notes = served.notes ?? null;
  return out;
}

export function readCaseJson(family: string, name: string, file: string): any {
  return json(caseFile(family, name, file));
}

/** Runs a case's codecs and returns what each step gave, for comparison with the case's files. */
export function runFamilyCase(family: Family<any>, name: string): { call: unknown; upstream: unknown; response: unknown } {
  const info = readCaseJson(family.name, name, 'case.json') as FamilyCase;
  const ask = family.read(caseInput(family.name, name));
  const up = family.encode(ask, info.target);
  if (info.relay) {
    const raw = readFileSync(caseFile(family.name, name, info.relay.file));
    if (!family.relay?.(ask, info.target, info.relay.contentType)) throw new Error('the codec does not relay this reply');
    const end = family.relayEnd!(ask, info.target, { tail: raw.toString('latin1').slice(-8192), bytes: raw.length });
    return { call: family.call(ask), upstream: upstreamView(up), response: servedView(end, info.price) };
  }
  const replies = caseReplies(family.name, name);
  if (family.relay?.(ask, info.target, replies[0]!.contentType)) throw new Error('the codec relays this reply: give the case a relay file');
  const served = family.decode(replies, ask, info.target, { id: 'trace-golden', now: 1_700_000_000 });
  return { call: family.call(ask), upstream: upstreamView(up), response: servedView(served, info.price) };
}
