import { expect } from 'vitest';

/** The standard error body `{error: {message, type, code}}` with the given status's type. */
export function expectErrorBody(r: { status: number; json: any }, status: number, type?: string): void {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  expect(r.json).toMatchObject({ error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) } });
  expect(r.json.error.message.length).toBeGreaterThan(0);
  if (type) expect(r.json.error.type).toBe(type);
}

/** Asserts that none of `secrets` appears whole anywhere in `value` (serialized). */
export function expectNoSecrets(value: unknown, secrets: string[]): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const s of secrets) expect(text.includes(s), `secret ${s.slice(0, 6)}... leaked in ${text.slice(0, 300)}`).toBe(false);
}

/** A client call with a router API key; returns status, headers and parsed JSON (or text). */
export async function call(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; text: string; headers: Headers; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers, ms: performance.now() - t0 };
}

export const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});
