/**
 * The upstream client (src/daemon/proxy/upstream.ts) against a real node:http server on loopback: whole and
 * chunked reads, compressed replies, backpressure on a large body, the size limit, and aborts before and
 * after the headers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamExchange, sendUpstream } from '../../src/daemon/net/upstream.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: Server;
let base: string;
const closed: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.on('close', () => closed.push(req.url!));
    const h = routes.get(req.url!);
    if (h) h(req, res);
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => {
  server.close(() => r());
  server.closeAllConnections();
}));

async function readAll(x: UpstreamExchange): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let c = await x.read(); c !== undefined; c = await x.read()) parts.push(c);
  return Buffer.concat(parts);
}

describe('upstream client', () => {
  it('sends method, headers and body; gives status, lower-case headers (repeats as arrays) and the text', async () => {
    routes.set('/echo?x=1', (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('X-Multi', ['a', 'b']);
        res.writeHead(201, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body }));
      });
    });
    const reply = await sendUpstream({ url: `${base}/echo?x=1`, headers: { authorization: 'Bearer k' }, body: 'hello' });
    expect(reply.statusCode).toBe(201);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['x-multi']).toEqual(['a', 'b']);
    expect(JSON.parse(await reply.text())).toEqual({ method: 'POST', auth: 'Bearer k', body: 'hello' });
  });

  it('decodes gzip and brotli replies, whole and chunk by chunk (an SSE stream sent in pieces)', async () => {
    const sse = Array.from({ length: 50 }, (_, i) => `data: {"i":${i}}\n\n`).join('');
    routes.set('/gzip', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const z = gzipSync(sse);
      res.write(z.subarray(0, 10));
      setTimeout(() => res.end(z.subarray(10)), 20);
    });
    routes.set('/br', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
      res.end(brotliCompressSync('{"ok":true}'));
    });
    const streamed = await sendUpstream({ url: `${base}/gzip`, headers: {} });
    expect((await readAll(streamed)).toString()).toBe(sse);
    const whole = await sendUpstream({ url: `${base}/gzip`, headers: {} });
    expect(await whole.text()).toBe(sse);
    expect(await (await sendUpstream({ url: `${base}/br`, headers: {} })).text()).toBe('{"ok":true}');
  });

  it('a large body read slowly arrives whole and in order (the socket is paused, not buffered without bound)', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let drains = 0;
    routes.set('/large', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      let i = 0;
      const pump = () => {
        while (i < 64) {
          const b = Buffer.from(chunk);
          b.write(String(i).padStart(4, '0'));
          i++;
          if (!res.write(b)) {
            drains++;
            return res.once('drain', pump);
          }
        }
        res.end();
      };
      pump();
    });
    const reply = await sendUpstream({ url: `${base}/large`, headers: {} });
    await new Promise((r) => setTimeout(r, 200)); // the reader is busy: the upstream must wait
    const body = await readAll(reply);
    expect(body.length).toBe(64 * 64 * 1024);
    for (let i = 0; i < 64; i++) expect(body.subarray(i * 65536, i * 65536 + 4).toString()).toBe(String(i).padStart(4, '0'));
    expect(drains).toBeGreaterThan(0);
  });

  it('text(limit) rejects past the limit and releases the request', async () => {
    routes.set('/big', (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(300_000));
    });
    const reply = await sendUpstream({ url: `${base}/big`, headers: {} });
    await expect(reply.text(100_000)).rejects.toThrow(/exceeds 100000 bytes/);
  });

  it('abort before the headers rejects with UND_ERR_ABORTED and closes the upstream request; abort mid-body fails the read', async () => {
    routes.set('/hang', () => {});
    const { exchange, response } = UpstreamExchange.send({ url: `${base}/hang`, headers: {}, method: 'GET' });
    setTimeout(() => exchange.abort(), 50);
    await expect(response).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    await expect.poll(() => closed.includes('/hang')).toBe(true);

    routes.set('/slow', (_req, res) => {
      res.writeHead(200);
      res.write('first');
    });
    const reply = await sendUpstream({ url: `${base}/slow`, headers: {} });
    expect((await reply.read())!.toString()).toBe('first');
    const next = reply.read();
    reply.abort();
    await expect(next).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    expect(reply.aborted).toBe(true);
  });

  it('an AbortSignal aborts too; a refused connection rejects with the network error', async () => {
    routes.set('/hang2', () => {});
    await expect(sendUpstream({ url: `${base}/hang2`, headers: {}, signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    await expect(sendUpstream({ url: `http://127.0.0.1:${port}/`, headers: {} })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
