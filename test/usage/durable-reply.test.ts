/**
 * holdReplyEnd (usageDurability 'reply') on a real loopback HTTP response: the end waits for the durable
 * promise, later end calls keep their order, and with nothing pending the reply ends at once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { holdReplyEnd } from '../../src/daemon/usage/durable-reply.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  return new Promise((resolve) => server!.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server!.address() as AddressInfo).port}`)));
}

describe('holdReplyEnd', () => {
  it('holds the end of the reply until the wait settles, and keeps later end calls in order', async () => {
    let release!: () => void;
    const durable = new Promise<void>((r) => (release = r));
    let endedAt = 0;
    let releasedAt = 0;
    const url = await serve((_req, res) => {
      holdReplyEnd(res, () => durable);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part one, ');
      res.end('last part');
      // A second end (as the fast path's HANDLED does) must not overtake the held one.
      res.end();
      res.on('finish', () => (endedAt = performance.now()));
      setTimeout(() => {
        releasedAt = performance.now();
        release();
      }, 150);
    });
    const t0 = performance.now();
    const res = await fetch(url);
    const text = await res.text();
    expect(text).toBe('part one, last part');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(endedAt).toBeGreaterThanOrEqual(releasedAt);
  });

  it('ends at once when nothing is pending', async () => {
    let asked = 0;
    const url = await serve((_req, res) => {
      holdReplyEnd(res, () => {
        asked++;
        return undefined;
      });
      res.end('done');
    });
    const t0 = performance.now();
    expect(await (await fetch(url)).text()).toBe('done');
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(asked).toBe(1);
  });
});
