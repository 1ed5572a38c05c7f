import { randomBytes } from 'node:crypto';
import { CodecError } from '../translate/errors.js';
import type { ProviderEndpoints } from '../providers/types.js';
import type { FamilyTarget, MultipartBody, UploadedFile } from './family.js';

/** Small pure helpers the family codecs share. */

/** Parses JSON, or undefined. */
export function tryJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-negative finite number, or undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/** The 400 of a bad client field. */
export function badField(message: string, param?: string): CodecError {
  return new CodecError(400, message, param ? { param } : {});
}

/** A JSON body's `model`, required. */
export function requireModel(raw: Record<string, unknown>): string {
  if (typeof raw.model !== 'string' || raw.model === '') throw badField("The 'model' field is required.", 'model');
  return raw.model;
}

/**
 * Refuses a target whose provider does not serve the endpoint. The refusal is target-specific
 * (`endpoint_not_supported`): inside a combo the next target is tried.
 */
export function requireEndpoint(target: FamilyTarget, endpoint: keyof ProviderEndpoints, what: string): void {
  if (!target.provider.endpoints?.[endpoint]) {
    throw new CodecError(400, `Provider '${target.provider.id}' has no ${what} endpoint (model '${target.publicModel}').`, { code: 'endpoint_not_supported', param: 'model' });
  }
}

/** The first value of a multipart field, if present. */
export function field(body: MultipartBody, name: string): string | undefined {
  for (const [k, v] of body.fields) if (k === name) return v;
  return undefined;
}

/** A field name or filename made safe inside a quoted Content-Disposition parameter (WHATWG's escaping). */
function quoted(value: string): string {
  return value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

/** Encodes fields and files as a multipart/form-data body for the upstream (one buffer: it may be re-sent on failover). */
export function encodeMultipart(fields: readonly [string, string][], files: readonly UploadedFile[], boundary = `----router${randomBytes(12).toString('hex')}`): { body: Buffer; contentType: string } {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`));
  }
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(f.field)}"; filename="${quoted(f.filename)}"\r\nContent-Type: ${f.mimeType.replace(/[\r\n]/g, '')}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A multipart form re-encoded for a target: the same fields and files, `model` its own id. */
export function formFor(form: MultipartBody, model: string): { body: Buffer; contentType: string } {
  return encodeMultipart(
    form.fields.map(([k, v]): [string, string] => [k, k === 'model' ? model : v]),
    form.files,
  );
}

/** The last SSE event of a given type in a stream's tail, parsed. */
export function lastEvent(tail: string, type: string): any {
  const lines = tail.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.startsWith('data:') || !line.includes(type)) continue;
    const ev = tryJson(Buffer.from(line.slice(5).trim(), 'latin1').toString('utf8'));
    if (ev?.type === type) return ev;
  }
  return undefined;
}

/** The JSON content type router answers with. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON request to the same path with the body's model replaced by the target's. */
export function jsonAsk(path: string, raw: Record<string, unknown>, model: string, accept = 'application/json'): { path: string; body: string; contentType: string; accept: string } {
  return { path, body: JSON.stringify({ ...raw, model }), contentType: 'application/json', accept };
}
