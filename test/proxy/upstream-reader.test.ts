/**
 * The reply reader of UpstreamExchange as a state machine (see BodyState in src/daemon/proxy/upstream.ts):
 * one test per edge, driven through undici's handler interface the way undici drives it (including a
 * `resume()` that delivers the rest of the body and completes synchronously, inside the call), then a
 * seeded run of random interleavings of push/pause/resume/complete/error/abort in which every reader must
 * settle, and a real loopback server whose 4 MB reply is read whole after the socket was paused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplyTooLargeError, UpstreamExchange, sendUpstream } from '../../src/daemon/net/upstream.js';

const KiB = 1024;
const HIGH_WATER = 256 * KiB;

/** An exchange driven by hand: `aborts` records what undici was told, `onResume` runs inside resume(). */
function harness() {
  const x = new UpstreamExchange();
  const h = { x, aborts: [] as Error[], resumes: 0, onResume: undefined as undefined | (() => void) };
  x.onConnect((err) => h.aborts.push(err ?? new Error('abort')));
  return h;
}

function headers(h: ReturnType<typeof harness>, status = 200): void {
  h.x.onHeaders(status, [], () => {
    h.resumes++;
    const fn = h.onResume;
    h.onResume = undefined;
    fn?.();
  });
}

const chunk = (n: number, fill = 'x') => Buffer.alloc(n, fill);

/** Whether a promise settled within a few turns of the event loop. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('reader transitions', () => {
  it('headers -> flowing on onHeaders', () => {
    const h = harness();
    expect(h.x.state).toBe('headers');
    headers(h, 201);
    expect(h.x.state).toBe('flowing');
    expect(h.x.statusCode).toBe(201);
  });

  it('flowing -> paused when a chunk-by-chunk reader falls HIGH_WATER behind; paused -> flowing once it drains', async () => {
    const h = harness();
    headers(h);
    expect(h.x.onData(chunk(HIGH_WATER / 2))).toBe(true);
    expect(h.x.onData(chunk(HIGH_WATER / 2))).toBe(false);
    expect(h.x.state).toBe('paused');
    await h.x.read();
    expect(h.x.state).toBe('flowing');
    expect(h.resumes).toBe(1);
  });

  it('a whole read never pauses: flowing stays flowing past HIGH_WATER', async () => {
    const h = harness();
    headers(h);
    const text = h.x.text();
    for (let i = 0; i < 8; i++) expect(h.x.onData(chunk(HIGH_WATER / 2))).toBe(true);
    expect(h.x.state).toBe('flowing');
    h.x.onComplete();
    expect((await text).length).toBe(4 * HIGH_WATER);
  });

  it('paused -> flowing -> complete synchronously inside resume() wakes text() (the lost wake-up of issue 16)', async () => {
    const h = harness();
    headers(h);
    h.x.onData(chunk(HIGH_WATER));
    expect(h.x.state).toBe('paused');
    h.onResume = () => {
      h.x.onData(chunk(10, 'y'));
      h.x.onComplete();
    };
    const text = h.x.text();
    expect(await settled(text)).toBe(true);
    expect((await text).length).toBe(HIGH_WATER + 10);
    expect(h.x.state).toBe('complete');
  });

  it('synchronous completion inside resume() wakes textUpTo() and read() too', async () => {
    const a = harness();
    headers(a);
    a.x.onData(chunk(HIGH_WATER));
    a.onResume = () => a.x.onComplete();
    const upTo = a.x.textUpTo(2 * HIGH_WATER);
    expect(await settled(upTo)).toBe(true);
    expect((await upTo).length).toBe(HIGH_WATER);

    const b = harness();
    headers(b);
    b.x.onData(chunk(HIGH_WATER));
    b.onResume = () => {
      b.x.onData(chunk(5, 'z'));
      b.x.onComplete();
    };
    expect((await b.x.read())!.length).toBe(HIGH_WATER); // draining resumes: the rest arrives inside the call
    expect((await b.x.read())!.toString()).toBe('zzzzz');
    expect(await b.x.read()).toBeUndefined();
  });

  it('flowing -> complete: buffered chunks stay readable, then the end', async () => {
    const h = harness();
    headers(h);
    h.x.onData(Buffer.from('ab'));
    h.x.onComplete();
    expect(h.x.state).toBe('complete');
    expect((await h.x.read())!.toString()).toBe('ab');
    expect(await h.x.read()).toBeUndefined();
  });

  it('a reader waiting in flowing is woken by a later chunk and by the completion', async () => {
    const h = harness();
    headers(h);
    const text = h.x.text();
    setTimeout(() => h.x.onData(Buffer.from('late')), 5);
    setTimeout(() => h.x.onComplete(), 10);
    expect(await text).toBe('late');
  });

  it('headers -> failed on abort: undici is told, the reader rejects', async () => {
    const h = harness();
    h.x.abort();
    expect(h.x.state).toBe('failed');
    expect(h.aborts).toHaveLength(1);
    await expect(h.x.read()).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
  });

  it('flowing -> failed on onError wakes a waiting reader with the error', async () => {
    const h = harness();
    headers(h);
    const read = h.x.read();
    h.x.onError(Object.assign(new Error('socket hang up'), { code: 'UND_ERR_SOCKET' }));
    await expect(read).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(h.x.state).toBe('failed');
  });

  it('paused -> failed on abort wakes a waiting whole read', async () => {
    const h = harness();
    headers(h);
    h.x.onData(chunk(HIGH_WATER));
    h.onResume = () => {}; // resume() delivers nothing yet
    const text = h.x.text();
    await new Promise((r) => setImmediate(r));
    h.x.abort();
    await expect(text).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    expect(h.aborts).toHaveLength(1);
  });

  it('complete -> failed on abort: unread chunks are dropped, undici (done already) is not told', async () => {
    const h = harness();
    headers(h);
    h.x.onData(Buffer.from('unread'));
    h.x.onComplete();
    h.x.abort();
    expect(h.x.state).toBe('failed');
    expect(h.x.aborted).toBe(true);
    expect(h.aborts).toHaveLength(0);
    await expect(h.x.read()).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    await expect(h.x.text()).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
  });

  it('complete is not undone by a late undici error; failed ignores later data and completion', async () => {
    const h = harness();
    headers(h);
    h.x.onData(Buffer.from('ok'));
    h.x.onComplete();
    h.x.onError(new Error('late'));
    expect(await h.x.text()).toBe('ok');

    const f = harness();
    headers(f);
    f.x.onError(new Error('gone'));
    expect(f.x.onData(Buffer.from('x'))).toBe(false);
    f.x.onComplete();
    expect(f.x.state).toBe('failed');
    await expect(f.x.text()).rejects.toThrow('gone');
  });

  it('flowing -> failed past the whole-read limit: undici is told, text() rejects', async () => {
    const h = harness();
    headers(h);
    const text = h.x.text(1000);
    h.x.onData(chunk(600));
    expect(h.x.onData(chunk(600))).toBe(false);
    await expect(text).rejects.toBeInstanceOf(ReplyTooLargeError);
    expect(h.aborts[0]).toBeInstanceOf(ReplyTooLargeError);
    expect(h.x.state).toBe('failed');
  });
});

/** A small seeded PRNG (mulberry32), so a failing interleaving can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('random interleavings', () => {
  it('every reader settles once the exchange completes or is aborted, whatever came before (500 runs)', async () => {
    for (let seed = 1; seed <= 500; seed++) {
      const rnd = prng(seed);
      const h = harness();
      headers(h);
      const mode = ['text', 'textUpTo', 'read'][Math.floor(rnd() * 3)]!;
      let ended = false;
      let sent = 0;
      const event = () => {
        if (ended) return;
        const r = rnd();
        if (r < 0.6) {
          const n = Math.floor(rnd() * HIGH_WATER * 0.7) + 1;
          sent += n;
          h.x.onData(chunk(n));
        } else if (r < 0.75) {
          ended = true;
          h.x.onComplete();
        } else if (r < 0.8) {
          ended = true;
          h.x.abort();
        } else if (r < 0.83) {
          ended = true;
          h.x.onError(new Error('reset'));
        }
      };
      // Some events happen before the reader starts, some inside resume(), some later.
      for (let i = 0, n = Math.floor(rnd() * 4); i < n; i++) event();
      const installResume = () => {
        h.onResume = () => {
          for (let i = 0, n = Math.floor(rnd() * 3); i < n; i++) event();
          installResume();
        };
      };
      installResume();
      let reader: Promise<unknown>;
      if (mode === 'text') reader = h.x.text();
      else if (mode === 'textUpTo') reader = h.x.textUpTo(Math.floor(rnd() * 2 * HIGH_WATER) + 1);
      else {
        reader = (async () => {
          let total = 0;
          for (let c = await h.x.read(); c !== undefined; c = await h.x.read()) total += c.length;
          return total;
        })();
      }
      reader.catch(() => {});
      for (let i = 0; i < 20 && !ended; i++) {
        await new Promise((r) => setImmediate(r));
        event();
      }
      if (!ended) h.x.abort();
      expect(await settled(reader), `seed ${seed} (${mode}) hangs`).toBe(true);
      const out = await reader.catch(() => undefined);
      if (mode === 'read' && typeof out === 'number' && h.x.state === 'complete') expect(out, `seed ${seed}`).toBe(sent);
    }
  });
});

describe('over loopback', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const size = Number(new URL(req.url!, 'http://x').searchParams.get('size'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(size, 'a'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  }));

  it.each([256 * KiB, 1024 * KiB, 4096 * KiB])('a %i-byte reply read whole after the socket paused arrives whole', async (size) => {
    const reply = await sendUpstream({ url: `${base}/?size=${size}`, method: 'GET', headers: {} });
    // The reader comes late: undici fills the high-water mark, pauses, and keeps the rest in the socket.
    await new Promise((r) => setTimeout(r, 100));
    const text = reply.text();
    expect(await Promise.race([text, new Promise((r) => setTimeout(() => r('hung'), 5000))])).not.toBe('hung');
    expect((await text).length).toBe(size);
  });
});
