/**
 * Bad input over real HTTP, against a daemon started in-process with `runDaemon` (temp home, port 0):
 * malformed and mistyped bodies, unknown fields, bad ids, body limits (declared and chunked), wrong content
 * types, unknown routes. Every error has the standard body and leaks no stack trace or absolute path.
 */
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { createApp } from '../../src/daemon/http/app.js';
import { RouterError } from '../../src/daemon/http/errors.js';
import type { RouteDef } from '../../src/daemon/http/routes.js';
import { runDaemon, type StartOutcome } from '../../src/daemon/main.js';
import type { Services } from '../../src/daemon/services.js';
import { deriveCliToken } from '../../src/shared/cli-token.js';

let home: string;
let outcome: StartOutcome;
let base: string;
let token: string;
/** Every error message the daemon sent during this file, checked for leaks at the end. */
const messages: string[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-bad-input-'));
  outcome = await runDaemon({ home, host: '127.0.0.1', port: 0, graceMs: 2_000 });
  if (outcome.kind !== 'started') throw new Error(`daemon did not start: ${JSON.stringify(outcome)}`);
  base = outcome.url;
  token = deriveCliToken(join(home, 'cli-token.salt'))!;
});

afterAll(async () => {
  if (outcome?.kind === 'started') {
    await fetch(`${base}/api/system/shutdown`, { method: 'POST', headers: { 'x-router-cli-token': token, 'content-type': 'application/json' } }).catch(() => {});
    await Promise.race([outcome.stopped, new Promise((r) => setTimeout(r, 5_000))]);
  }
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

/** One call with the CLI token (management allowed), a JSON content type unless overridden. */
async function api(method: string, path: string, body?: string | object, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      'x-router-cli-token': token,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return toReply(res.status, res.headers, await res.text());
}

function toReply(status: number, headers: Headers, text: string): Reply {
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; the assertions will say so
  }
  if (status >= 400 && typeof body?.error?.message === 'string') messages.push(body.error.message);
  return { status, headers, body };
}

/** Raw request with node:http, for bodies fetch cannot send: chunked (no content-length) or a lying length. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string | number>,
  chunks: Array<string | Buffer>,
  opts: { end?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = httpRequest({ method, hostname: url.hostname, port: url.port, path: url.pathname, headers: { 'x-router-cli-token': token, ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve(toReply(res.statusCode ?? 0, h, Buffer.concat(parts).toString('utf8')));
        req.destroy();
      });
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    if (opts.end !== false) req.end();
  });
}

/** The standard error body `{error:{message,type,code}}`. */
function expectStandardError(r: Reply, status: number): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/application\/json/);
  expect(r.body).toEqual({ error: expect.objectContaining({ message: expect.any(String), type: expect.any(String), code: expect.any(String) }) });
  expect(r.body.error.message.length).toBeGreaterThan(0);
}

/** A JSON body for POST /api/keys padded with spaces to exactly `size` bytes. */
function paddedKeyBody(size: number, name = 'padded'): string {
  const core = JSON.stringify({ name });
  return core + ' '.repeat(size - Buffer.byteLength(core));
}

describe('bad request bodies', () => {
  it('malformed JSON -> 400 standard body', async () => {
    for (const body of ['{"name": ', '{name: "x"}', "{'name':'x'}", '{"name":"x"} trailing']) {
      const r = await api('POST', '/api/keys', body);
      expectStandardError(r, 400);
      expect(r.body.error.message).toMatch(/not valid JSON/);
    }
    expectStandardError(await api('POST', '/api/keys', ''), 400); // no body at all
    expectStandardError(await raw('POST', '/api/keys', { 'content-type': 'application/json' }, [Buffer.from([0x7b, 0x22, 0xff, 0xfe])]), 400);
  });

  it('wrong types -> 400 naming the field', async () => {
    const cases: Array<[string, string, object, string]> = [
      ['POST', '/api/keys', { name: 123 }, 'name'],
      ['POST', '/api/keys', { name: 'ok', scopes: 'proxy' }, 'scopes'],
      ['POST', '/api/keys', { name: 'ok', scopes: ['proxy', 'root'] }, 'scopes.1'],
      ['PATCH', '/api/settings', { requireLogin: 'yes' }, 'requireLogin'],
      ['PATCH', '/api/settings', { maxManagementBodyBytes: 12.5 }, 'maxManagementBodyBytes'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await api(method, path, body);
      expectStandardError(r, 400);
      expect(r.body.error.message, `${method} ${path} ${JSON.stringify(body)}`).toContain(`'${field}'`);
      expect(r.body.error.param).toBe(field);
    }
    const notObject = await api('POST', '/api/keys', [{ name: 'x' }]);
    expectStandardError(notObject, 400);
  });

  it('a name of 101 characters -> 400; 100 characters is fine', async () => {
    const long = await api('POST', '/api/keys', { name: 'n'.repeat(101) });
    expectStandardError(long, 400);
    expect(long.body.error.message).toContain("'name'");
    const ok = await api('POST', '/api/keys', { name: 'n'.repeat(100) });
    expect(ok.status).toBe(201);
    expect(ok.body.name).toBe('n'.repeat(100));
    expectStandardError(await api('POST', '/api/keys', { name: '   ' }), 400);
  });

  it('unknown fields are refused on POST /api/keys and PATCH /api/settings', async () => {
    const k = await api('POST', '/api/keys', { name: 'x', admin: true });
    expectStandardError(k, 400);
    expect(k.body.error.message).toContain('admin');
    const s = await api('PATCH', '/api/settings', { requireLogin: false, notASetting: 1 });
    expectStandardError(s, 400);
    expect(s.body.error.message).toContain('notASetting');
    // Nothing of the refused patch was applied.
    expect((await api('GET', '/api/settings')).body.requireLogin).toBe(true);
  });

  it('PATCH /api/keys/{id} with {} -> 400', async () => {
    const created = await api('POST', '/api/keys', { name: 'patch-me' });
    expect(created.status).toBe(201);
    const r = await api('PATCH', `/api/keys/${created.body.id}`, {});
    expectStandardError(r, 400);
    expect((await api('PATCH', `/api/keys/${created.body.id}`, { name: 'patched' })).body.name).toBe('patched');
  });

  it('a non-uuid or unknown id -> 404 standard body', async () => {
    for (const id of ['not-a-uuid', '123', '00000000-0000-4000-8000-000000000000', "1'%20OR%20'1'='1"]) {
      expectStandardError(await api('GET', `/api/keys/${id}`), 404);
      expectStandardError(await api('PATCH', `/api/keys/${id}`, { name: 'x' }), 404);
      expectStandardError(await api('DELETE', `/api/keys/${id}`), 404);
    }
  });

  it('a wrong content type -> 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await api('POST', '/api/keys', '{"name":"x"}', { 'content-type': type });
      expectStandardError(r, 415);
    }
    expect((await api('POST', '/api/keys', '{"name":"typed"}', { 'content-type': 'application/json; charset=utf-8' })).status).toBe(201);
  });

  it('an unknown route -> 404 standard body with a plain message', async () => {
    for (const [method, path] of [['GET', '/api/nope'], ['POST', '/api/keys/extra/segments'], ['PUT', '/api/keys'], ['GET', '/v9/whatever']]) {
      const r = await api(method!, path!);
      expectStandardError(r, 404);
      expect(r.body.error.message).not.toContain('<path>');
      expect(r.body.error.message).toMatch(/no route/i);
    }
  });
});

describe('body size limits', () => {
  const LIMIT = 2048;

  it('maxManagementBodyBytes can be lowered through PATCH /api/settings', async () => {
    const r = await api('PATCH', '/api/settings', { maxManagementBodyBytes: LIMIT });
    expect(r.status).toBe(200);
    expect(r.body.maxManagementBodyBytes).toBe(LIMIT);
  });

  it('a body at the limit passes; one byte over -> 413', async () => {
    const at = await api('POST', '/api/keys', paddedKeyBody(LIMIT, 'at-limit'));
    expect(at.status, JSON.stringify(at.body)).toBe(201);
    const over = await api('POST', '/api/keys', paddedKeyBody(LIMIT + 1, 'over-limit'));
    expectStandardError(over, 413);
    expect(over.body.error.message).toContain(String(LIMIT));
  });

  it('a chunked body (no content-length) over the limit -> 413; at the limit passes', async () => {
    const body = paddedKeyBody(LIMIT * 3, 'chunked-over');
    const chunks = [body.slice(0, 1000), body.slice(1000, 3000), body.slice(3000)];
    const over = await raw('POST', '/api/keys', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks);
    expectStandardError(over, 413);
    // The rest of the body was never read: the reply says so, and a keep-alive client opens a new connection.
    expect(over.headers.get('connection')).toBe('close');
    const ok = paddedKeyBody(LIMIT, 'chunked-at');
    const at = await raw('POST', '/api/keys', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [ok.slice(0, 500), ok.slice(500)]);
    expect(at.status, JSON.stringify(at.body)).toBe(201);
  });

  it('a declared content-length over the limit is refused before the body is sent', async () => {
    const r = await raw('POST', '/api/keys', { 'content-type': 'application/json', 'content-length': 50 * 1024 * 1024 }, ['{"name":'], { end: false });
    expectStandardError(r, 413);
  });

  it('the limit applies to settings too, and can be raised again', async () => {
    const big = JSON.stringify({ allowedOrigins: Array.from({ length: 40 }, (_, i) => `http://localhost:${5000 + i}/${'x'.repeat(60)}`) });
    expect(Buffer.byteLength(big)).toBeGreaterThan(LIMIT);
    expectStandardError(await api('PATCH', '/api/settings', big), 413);
    expect((await api('PATCH', '/api/settings', { maxManagementBodyBytes: 1024 * 1024 })).status).toBe(200);
    expect((await api('PATCH', '/api/settings', big)).status).toBe(200);
  });
});

describe('sanitized error messages', () => {
  it('a refused field named like an absolute path is not echoed as a path', async () => {
    const r = await api('POST', '/api/keys', { name: 'x', '/home/alice/.router/secret.key': 1 });
    expectStandardError(r, 400);
    expect(r.body.error.message).not.toContain('/home/alice');
    expect(r.body.error.message).toContain('<path>');
  });

  it('errors thrown inside handlers never reach the client with a stack or a path (in-process app)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-sanitize-'));
    let services: Services | undefined;
    try {
      services = await bootServices({ home: dir, host: '127.0.0.1', port: 0 });
      const thrower = (path: string, make: () => unknown): RouteDef => ({
        method: 'GET',
        path,
        tier: 'public',
        tag: 'test',
        summary: 'test-only',
        handler: () => {
          throw make();
        },
      });
      const withStack = Object.assign(new Error('bad thing\n    at handler (/srv/router/dist/daemon/x.js:10:5)\n    at run (node:internal/x:1:1)'), { status: 400 });
      const app = createApp(
        [
          thrower('/t/raw', () => new Error("EACCES: permission denied, open '/home/alice/.router/secret.key'")),
          thrower('/t/router', () => new RouterError(400, 'cannot read /home/alice/.router/config.json')),
          thrower('/t/windows', () => new RouterError(400, 'cannot read C:\\Users\\alice\\router\\router.db')),
          thrower('/t/file-url', () => new RouterError(422, 'bad module file:///opt/router/dist/x.js')),
          thrower('/t/stack', () => withStack),
          thrower('/t/string', () => 'a thrown string /etc/shadow/x'),
          thrower('/t/route', () => new RouterError(400, 'GET /v1/models and POST /api/providers/p1/test; see https://api.openai.com/v1/models')),
        ],
        services,
      );
      const get = async (p: string) => {
        const res = await app.request(`http://router.test${p}`, {}, { remoteAddress: '127.0.0.1' });
        return toReply(res.status, res.headers, await res.text());
      };
      const rawErr = await get('/t/raw');
      expectStandardError(rawErr, 500);
      expect(rawErr.body.error.message).toBe('Internal server error.');
      const expected: Array<[string, number, string]> = [
        ['/t/router', 400, 'cannot read <path>'],
        ['/t/windows', 400, 'cannot read <path>'],
        ['/t/stack', 400, 'bad thing'],
        ['/t/file-url', 422, 'bad module <path>'],
        // API routes and URLs are not file-system paths: they stay readable.
        ['/t/route', 400, 'GET /v1/models and POST /api/providers/p1/test; see https://api.openai.com/v1/models'],
        ['/api/no/such/route', 404, 'No route matches GET /api/no/such/route.'],
      ];
      for (const [p, status, message] of expected) {
        const r = await get(p);
        expectStandardError(r, status);
        expect(r.body.error.message, p).toBe(message);
      }
      expectStandardError(await get('/t/string'), 500);
    } finally {
      if (services) closeServices(services);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('no error message sent in this file held a stack trace or an absolute path', () => {
    expect(messages.length).toBeGreaterThan(20);
    const leaks = messages.filter(
      (m) => /\n\s+at\s/.test(m) || /(?:^|[\s'"(=])(?:\/(?:home|etc|srv|opt|tmp|usr|var|Users|work)\b|[A-Za-z]:\\|file:\/\/)/.test(m),
    );
    expect(leaks).toEqual([]);
  });
});
