/**
 * Malformed multipart uploads against the real daemon (issue 27 item 1): a body that ends inside a file
 * part once ended the process (busboy's per-file stream had no 'error' listener). On every upload route a
 * truncated or broken body is a 400 with the standard error body, and the daemon answers the next request.
 * Requests are written with node:http so that the bytes on the wire are exactly what the test says.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let key: string;

beforeAll(async () => {
  router = await startRouter();
  key = await router.createKey();
}, 30_000);

afterAll(async () => {
  await router?.stop();
});

interface Reply {
  status: number;
  json: any;
}

/** Sends one request; `chunked` leaves out Content-Length (Transfer-Encoding: chunked). */
function send(path: string, body: string | Buffer, headers: Record<string, string>, chunked = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all = { authorization: `Bearer ${key}`, ...headers, ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(body)) }) };
    const req = httpRequest(`${router.url}${path}`, { method: 'POST', headers: all, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode!, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function expectAlive(): Promise<void> {
  const health = await fetch(`${router.url}/api/health`);
  expect(health.status).toBe(200);
}

function expectStandard400(r: Reply, message: RegExp): void {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: expect.any(String), message: expect.stringMatching(message) });
  // busboy's own wording (and anything like a stack) stays in the daemon.
  expect(r.json.error.message).not.toMatch(/Unexpected end of|busboy|node_modules|\n\s+at /);
}

const TYPE = { 'content-type': 'multipart/form-data; boundary=XBOUNDARY' };
const line = (i: number) => `${JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'openai/gpt-4o-mini', messages: [] } })}\n`;
/** Each upload route with its fields, its file part and content that is valid up to where the body is cut. */
const UPLOADS: Array<{ path: string; fields: [string, string][]; file: [string, string, string]; content: string }> = [
  { path: '/v1/audio/transcriptions', fields: [['model', 'openai/whisper-1']], file: ['file', 'talk.mp3', 'audio/mpeg'], content: 'x'.repeat(50_000) },
  { path: '/v1/audio/translations', fields: [['model', 'openai/whisper-1']], file: ['file', 'talk.mp3', 'audio/mpeg'], content: 'x'.repeat(50_000) },
  { path: '/v1/images/edits', fields: [['model', 'openai/gpt-image-1'], ['prompt', 'a hat']], file: ['image', 'cat.png', 'image/png'], content: 'x'.repeat(50_000) },
  { path: '/v1/files', fields: [['purpose', 'batch']], file: ['file', 'in.jsonl', 'application/jsonl'], content: Array.from({ length: 200 }, (_, i) => line(i)).join('') },
];

function head(fields: [string, string][], file: [string, string, string]): string {
  const parts = fields.map(([n, v]) => `--XBOUNDARY\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('');
  return `${parts}--XBOUNDARY\r\nContent-Disposition: form-data; name="${file[0]}"; filename="${file[1]}"\r\nContent-Type: ${file[2]}\r\n\r\n`;
}

describe('a multipart body that ends inside a file part', () => {
  for (const route of UPLOADS) {
    it(`${route.path}: 400 with the standard body, and the daemon keeps answering`, async () => {
      const content = route.content;
      const r = await send(route.path, head(route.fields, route.file) + content, TYPE);
      expectStandard400(r, /ended before its closing boundary/);
      await expectAlive();
      // The same body sent chunked (no Content-Length) is refused the same way.
      const chunked = await send(route.path, head(route.fields, route.file) + content, TYPE, true);
      expectStandard400(chunked, /ended before its closing boundary/);
      await expectAlive();
    });
  }
});

describe('other malformed multipart bodies', () => {
  const cases: Array<[string, (route: (typeof UPLOADS)[number]) => string, RegExp]> = [
    ['ends inside a part header', (r) => `--XBOUNDARY\r\nContent-Disposition: form-data; name="${r.file[0]}"; filen`, /ended before its closing boundary|malformed/],
    ['ends inside a text field', (r) => `--XBOUNDARY\r\nContent-Disposition: form-data; name="${r.fields[0]![0]}"\r\n\r\nopen`, /ended before its closing boundary/],
    ['ends right after a part, before the closing boundary', (r) => `${head(r.fields, r.file)}${r.content}\r\n`, /ended before its closing boundary/],
    ['a part header without its blank line', (r) => `--XBOUNDARY\r\nContent-Disposition: form-data; name="${r.file[0]}"\r\nno colon here\r\n--XBOUNDARY--\r\n`, /malformed|ended before/],
  ];
  for (const [name, build, message] of cases) {
    it(`${name}: 400 on every upload route; the daemon keeps answering`, async () => {
      for (const route of UPLOADS) {
        const r = await send(route.path, build(route), TYPE);
        expectStandard400(r, message);
      }
      await expectAlive();
    });
  }

  it('no boundary, or a body with no parts at all: 400 on every upload route', async () => {
    for (const route of UPLOADS) {
      const noBoundary = await send(route.path, 'whatever', { 'content-type': 'multipart/form-data' });
      expect(noBoundary.status).toBe(400);
      expect(noBoundary.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/boundary/) });
      const noParts = await send(route.path, 'not a multipart body at all', TYPE);
      expect(noParts.status).toBe(400);
      expect(noParts.json.error).toMatchObject({ type: 'invalid_request_error' });
    }
    await expectAlive();
  });

  it('a client that hangs up in the middle of a file part does not take the daemon down', async () => {
    for (const route of UPLOADS) {
      await new Promise<void>((resolve) => {
        const req = httpRequest(`${router.url}${route.path}`, {
          method: 'POST',
          agent: false,
          headers: { authorization: `Bearer ${key}`, ...TYPE, 'content-length': '1000000' },
        });
        req.on('error', () => resolve());
        req.on('response', () => resolve());
        req.write(head(route.fields, route.file) + 'y'.repeat(10_000), () => setTimeout(() => req.destroy(), 50));
      });
      await expectAlive();
    }
  });
});

describe('a chunked upload over the size limit on a keep-alive connection (issue 27 item 6)', () => {
  /**
   * Sends a whole chunked request on a raw socket, reads its reply, then sends a second request on the same
   * connection: the connection must answer it or close; it once stalled (the rest of the body never read).
   */
  async function overLimitThenNext(path: string, type: string, body: string): Promise<{ first: string; next: string }> {
    const { connect } = await import('node:net');
    const socket = connect(router.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let received = '';
    let closed = false;
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
    });
    socket.on('close', () => {
      closed = true;
    });
    socket.on('error', () => undefined);
    const chunked = body.match(/[\s\S]{1,65536}/g)!.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join('') + '0\r\n\r\n';
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`);
    const complete = () => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = Number(/content-length: (\d+)/i.exec(received.slice(0, end))?.[1] ?? 0);
      return received.length >= end + 4 + length;
    };
    await expect.poll(complete, { timeout: 5000 }).toBe(true);
    const first = received;
    received = '';
    if (!socket.destroyed && socket.writable) socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Answered or closed, within a deadline: never left hanging.
    await expect.poll(() => closed || /^HTTP\/1\.1 200 /.test(received), { timeout: 5000 }).toBe(true);
    socket.destroy();
    return { first, next: received };
  }

  it('JSON, multipart and /v1/files: 413 with the standard body, then the connection answers or closes', async () => {
    const limits = { maxRequestBodyBytes: 64 * 1024, batchFileMaxBytes: 64 * 1024 };
    expect((await router.manage('PATCH', '/api/settings', limits)).status).toBe(200);
    try {
      const big = 'z'.repeat(512 * 1024);
      const cases: Array<[string, string, string]> = [
        ['/v1/chat/completions', 'application/json', `{"model":"openai/gpt-4o","messages":[{"role":"user","content":"${big}"}]}`],
        ['/v1/images/edits', TYPE['content-type'], `${head(UPLOADS[2]!.fields, UPLOADS[2]!.file)}${big}\r\n--XBOUNDARY--\r\n`],
        ['/v1/files', TYPE['content-type'], `${head(UPLOADS[3]!.fields, UPLOADS[3]!.file)}${UPLOADS[3]!.content.repeat(20)}\r\n--XBOUNDARY--\r\n`],
      ];
      for (const [path, type, body] of cases) {
        const { first } = await overLimitThenNext(path, type, body);
        expect(first, path).toMatch(/^HTTP\/1\.1 413 /);
        const json = JSON.parse(first.slice(first.indexOf('\r\n\r\n') + 4));
        expect(json.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.stringMatching(/limit/) });
      }
      await expectAlive();
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024, batchFileMaxBytes: 200_000_000 });
    }
  }, 60_000);
});
