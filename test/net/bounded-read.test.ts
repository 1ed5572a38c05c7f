/**
 * boundedText (src/daemon/net/bounded-read.ts): the daemon's own fetches to other servers (a local model
 * server's list, an external vector store) read at most their limit, over real loopback HTTP; one byte more
 * cancels the body and rejects, whatever the server would go on sending.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BodyTooLargeError, boundedText } from '../../src/daemon/net/bounded-read.js';

let server: Server;
let url: string;
let endlessClosed: Promise<void>;

beforeAll(async () => {
  let closed!: () => void;
  endlessClosed = new Promise((r) => (closed = r));
  server = createServer((req, res) => {
    if (req.url === '/exact') return void res.end('a'.repeat(1000));
    // Sends forever (1 KiB at a time) until the client goes away.
    res.writeHead(200);
    const timer = setInterval(() => res.write('b'.repeat(1024)), 1);
    res.on('close', () => {
      clearInterval(timer);
      closed();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it('reads a body of exactly the limit, refuses an endless one past it and lets it go', async () => {
  expect(await boundedText(await fetch(`${url}/exact`), 1000)).toBe('a'.repeat(1000));
  await expect(boundedText(await fetch(`${url}/exact`), 999)).rejects.toBeInstanceOf(BodyTooLargeError);
  const err = await boundedText(await fetch(`${url}/endless`), 64 * 1024).catch((e) => e);
  expect(err).toBeInstanceOf(BodyTooLargeError);
  expect(err.limit).toBe(64 * 1024);
  // The connection is released: the server sees its client go.
  await endlessClosed;
});
