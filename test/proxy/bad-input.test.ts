/**
 * Bad input is always a 4xx with the standard body (issue 16, item 4), through the real daemon: deeply
 * nested JSON, a client aborting its upload, an oversized request head; and bad upstream output reaches the
 * client in its own format: an HTML error page from a same-format upstream, malformed SSE lines mid-stream.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai' },
    { provider: 'anthropic', apiKey: 'sk-up-ant' },
  ]);
  ({ mock, router, key } = env);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

const chat = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

function expectStandardError(r: { json: any; text: string }) {
  expect(r.json, r.text).toMatchObject({ error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) } });
  expect(r.json.error.message).not.toMatch(/\/(home|tmp|work|usr)\/|\n\s+at /);
}

function daemonLog(): string {
  try {
    return readFileSync(join(router.home, 'router.log'), 'utf8');
  } catch {
    return '';
  }
}

/** Sends raw bytes over one socket and gives back everything the daemon answered before closing. */
function raw(bytes: string | Buffer, { end = true } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(router.port, '127.0.0.1', () => {
      socket.write(bytes);
      if (end) socket.end();
    });
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy());
  });
}

/** `depth` levels of nested objects around a value, as JSON text (built as text: no recursion here). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('bad input', () => {
  it('5,000-level nested JSON in a tool schema is a 400 with the standard body, not a 500', async () => {
    const body = `{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(5000)}}}]}`;
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/responses']) {
      const r = await post(path, path === '/v1/messages' ? body.replace('"tools"', '"max_tokens":10,"tools"') : body);
      expect(r.status, `${path}: ${r.text}`).toBe(400);
      expectStandardError(r);
    }
    // Nested anywhere else (a message's content, a management body) too.
    const deep = await post('/v1/chat/completions', `{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi","x":${nested(5000)}}]}`);
    expect(deep.status, deep.text).toBe(400);
    expectStandardError(deep);
    expect(daemonLog()).not.toMatch(/unhandled error|RangeError|Maximum call stack/);
  }, 30_000);

  it('deep JSON is the same 400 with traffic capture on (issue 27 item 6: it was a 500)', async () => {
    expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
    try {
      const body = `{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(5000)}}}]}`;
      for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/responses']) {
        const r = await post(path, path === '/v1/messages' ? body.replace('"tools"', '"max_tokens":10,"tools"') : body);
        expect(r.status, `${path}: ${r.text}`).toBe(400);
        expectStandardError(r);
      }
      const deep = await post('/v1/chat/completions', `{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi","x":${nested(5000)}}]}`);
      expect(deep.status, deep.text).toBe(400);
      expect(deep.json.error.code).toBe('nesting_too_deep');
      // The daemon still captures and serves the next request.
      expect((await post('/v1/chat/completions', JSON.stringify(chat))).status).toBe(200);
    } finally {
      await router.manage('PATCH', '/api/settings', { captureTraffic: false });
    }
  }, 30_000);

  it('a client that aborts its upload leaves an info line in the log, not an unhandled error', async () => {
    const head =
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"model":"openai/gpt-4o","messages":[`;
    await new Promise<void>((resolve, reject) => {
      const socket = connect(router.port, '127.0.0.1', () => {
        socket.write(head);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 200);
      });
      socket.on('error', reject);
    });
    await expect.poll(() => daemonLog(), { timeout: 3000 }).toMatch(/client closed the connection during its upload/i);
    const line = daemonLog().split('\n').find((l) => /during its upload/i.test(l))!;
    expect(line).toMatch(/info/i);
    expect(daemonLog()).not.toMatch(/unhandled error/);
    expect((await post('/v1/chat/completions', JSON.stringify(chat))).status).toBe(200);
  }, 20_000);

  it('an oversized request head is a 431 with the standard body', async () => {
    const reply = await raw(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 431 /);
    expect(reply.toLowerCase()).toContain('content-type: application/json');
    const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ error: { message: expect.stringMatching(/header/i), type: expect.any(String), code: 'request_header_fields_too_large' } });
  });
});

describe('bad upstream output', () => {
  const html = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>';

  it('an HTML 502 page from a same-format upstream reaches the client as the standard body', async () => {
    mock.enqueue({ type: 'status', status: 502, body: html, headers: { 'content-type': 'text/html' } });
    const r = await post('/v1/chat/completions', JSON.stringify(chat));
    expect(r.status).toBe(502);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expectStandardError(r);
    expect(r.json.error.message).toContain('Bad Gateway');
    expect(r.text).not.toContain('<html');

    mock.enqueue({ type: 'status', status: 502, body: html, headers: { 'content-type': 'text/html' } });
    const a = await post('/v1/messages', JSON.stringify({ ...chat, model: 'anthropic/claude-haiku-4-5', max_tokens: 10 }));
    expect(a.status).toBe(502);
    expect(a.text).not.toContain('<html');
    expect(a.json.error).toMatchObject({ message: expect.stringContaining('Bad Gateway'), type: expect.any(String) });
  });

  it('a well-formed same-format error still passes through byte for byte', async () => {
    mock.enqueue({ type: 'status', status: 400, message: 'bad thing', code: 'invalid_value' });
    const r = await post('/v1/chat/completions', JSON.stringify(chat));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ message: expect.stringContaining('bad thing'), code: 'invalid_value' });
  });

  it.each([
    ['openai-chat', '/v1/chat/completions', chat, 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'],
    [
      'anthropic',
      '/v1/messages',
      { ...chat, model: 'anthropic/claude-haiku-4-5', max_tokens: 10 },
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
    ],
  ])('malformed SSE lines after the commit end a %s stream with its error event, unrelayed', async (format, path, body, good) => {
    mock.enqueue({
      type: 'custom',
      fn: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(good);
        setTimeout(() => {
          res.write('data: <html>proxy error</html>\n\n');
          res.end('data: {"never":"relayed"}\n\n');
        }, 50);
      },
    });
    const r = await post(path, JSON.stringify({ ...body, stream: true }));
    expect(r.status).toBe(200);
    expect(r.text).toContain('Hello');
    expect(r.text).not.toContain('<html>');
    expect(r.text).not.toContain('never');
    const events = r.text.split('\n\n').filter(Boolean);
    const last = events[events.length - 1]!;
    if (format === 'anthropic') expect(last).toMatch(/^event: error\ndata: \{"type":"error","error":\{/);
    else expect(JSON.parse(last.replace(/^data: /, ''))).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
  });
});
