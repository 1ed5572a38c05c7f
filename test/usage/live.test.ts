/**
 * The live WebSocket's gate (spec Authentication 7): management authentication plus the Origin rule,
 * decided before the upgrade; and the frame layer's control frames.
 */
import { networkInterfaces } from 'node:os';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedOrigins, checkLiveOrigin, isLoopbackHost } from '../../src/daemon/live/origin.js';
import { acceptValue, checkHandshake } from '../../src/daemon/live/websocket.js';
import { frameReader, rawUpgrade, spawnDaemon, type Daemon } from './helpers.js';

describe('checkLiveOrigin (function level)', () => {
  const loop = { host: '127.0.0.1', port: 20128 };
  it('accepts the loopback dashboard origins of the listener port', () => {
    for (const o of ['http://127.0.0.1:20128', 'http://localhost:20128', 'http://[::1]:20128', 'HTTP://LOCALHOST:20128/']) {
      expect(checkLiveOrigin(o, loop, []).ok, o).toBe(true);
    }
  });
  it('refuses foreign origins, other ports, https loopback and the opaque "null" origin', () => {
    for (const o of ['https://evil.example', 'http://127.0.0.1:20129', 'https://127.0.0.1:20128', 'null', 'http://127.0.0.1.evil.example:20128', 'not a url']) {
      expect(checkLiveOrigin(o, loop, []).ok, o).toBe(false);
    }
  });
  it('accepts configured origins (normalized)', () => {
    expect(checkLiveOrigin('https://dash.example.com', loop, ['https://dash.example.com/']).ok).toBe(true);
    expect(checkLiveOrigin('https://dash.example.com:443', loop, ['https://dash.example.com']).ok).toBe(true);
    expect(checkLiveOrigin('https://other.example.com', loop, ['https://dash.example.com']).ok).toBe(false);
    expect([...allowedOrigins(1, ['http://a.test:8080/path'])]).toContain('http://a.test:8080');
  });
  it('a missing Origin is accepted only on a loopback bind', () => {
    for (const host of ['127.0.0.1', '127.0.0.5', '::1', '[::1]', 'localhost']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(checkLiveOrigin(null, { host, port: 1 }, []).ok, host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'router.lan']) {
      expect(checkLiveOrigin(null, { host, port: 1 }, []).ok, host).toBe(false);
      expect(checkLiveOrigin('', { host, port: 1 }, []).ok, host).toBe(false);
      // An allowed browser origin still works on a LAN bind.
      expect(checkLiveOrigin('http://127.0.0.1:1', { host, port: 1 }, []).ok, host).toBe(true);
    }
  });
});

describe('handshake helpers', () => {
  it('computes the RFC 6455 accept value', () => {
    // The example of RFC 6455 section 1.3.
    expect(acceptValue('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });
  it('rejects missing upgrade, wrong version and a malformed key', () => {
    const h = (o: Record<string, string>) =>
      new Headers({ upgrade: 'websocket', connection: 'keep-alive, Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...o });
    expect(checkHandshake(h({}))).toBeUndefined();
    expect(checkHandshake(h({ upgrade: 'h2c' }))?.status).toBe(426);
    expect(checkHandshake(h({ 'sec-websocket-version': '8' }))?.status).toBe(426);
    expect(checkHandshake(h({ 'sec-websocket-key': 'short' }))?.status).toBe(400);
    expect(checkHandshake(h({ connection: 'close' }))?.status).toBe(400);
  });
});

describe('GET /api/live on a loopback bind', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await spawnDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });
  const cli = () => ({ 'x-router-cli-token': d.cliToken });

  it.each(['http://127.0.0.1:PORT', 'http://localhost:PORT', 'http://[::1]:PORT'])('accepts Origin %s', async (tpl) => {
    const r = await rawUpgrade(d.url, '/api/live', { ...cli(), origin: tpl.replace('PORT', String(d.port)) });
    expect(r.status).toBe(101);
    expect(r.headers['sec-websocket-accept']).toBe(acceptValue(Buffer.from('0123456789abcdef').toString('base64')));
    const first = await frameReader(r.socket!, r.head).next((m) => m.type === 'status');
    expect(first.type).toBe('status');
    r.socket!.destroy();
  });

  it('accepts a client without Origin (loopback bind)', async () => {
    const r = await rawUpgrade(d.url, '/api/live', cli());
    expect(r.status).toBe(101);
    r.socket!.destroy();
  });

  it('refuses a foreign Origin with 403 before upgrading', async () => {
    for (const origin of ['https://evil.example', `http://127.0.0.1:${d.port + 1}`]) {
      const r = await rawUpgrade(d.url, '/api/live', { ...cli(), origin });
      expect(r.status, origin).toBe(403);
      expect(JSON.parse(r.body).error).toMatchObject({ code: 'forbidden' });
    }
  });

  it('accepts an origin added to the allowedOrigins setting', async () => {
    expect((await rawUpgrade(d.url, '/api/live', { ...cli(), origin: 'https://dash.example.com' })).status).toBe(403);
    expect((await d.manage('PATCH', '/api/settings', { allowedOrigins: ['https://dash.example.com'] })).status).toBe(200);
    const r = await rawUpgrade(d.url, '/api/live', { ...cli(), origin: 'https://dash.example.com' });
    expect(r.status).toBe(101);
    r.socket!.destroy();
  });

  it('requires management authentication', async () => {
    const r = await rawUpgrade(d.url, '/api/live', { origin: `http://127.0.0.1:${d.port}` });
    expect(r.status).toBe(401);
    const proxyKey = await d.createKey(['proxy']);
    const r2 = await rawUpgrade(d.url, '/api/live', { authorization: `Bearer ${proxyKey}` });
    expect(r2.status).toBe(403);
    const manageKey = await d.createKey(['manage']);
    const r3 = await rawUpgrade(d.url, '/api/live', { authorization: `Bearer ${manageKey}` });
    expect(r3.status).toBe(101);
    r3.socket!.destroy();
  });

  it('answers a plain GET with 426 and a bad handshake with 400/426', async () => {
    const plain = await fetch(`${d.url}/api/live`, { headers: cli() });
    expect(plain.status).toBe(426);
    expect((await plain.json()).error.message).toMatch(/WebSocket/);
    expect((await rawUpgrade(d.url, '/api/live', { ...cli(), 'sec-websocket-version': '7' })).status).toBe(426);
    expect((await rawUpgrade(d.url, '/api/live', { ...cli(), 'sec-websocket-key': 'nope' })).status).toBe(400);
  });

  it('answers ping with pong and completes the closing handshake', async () => {
    const r = await rawUpgrade(d.url, '/api/live', cli());
    const socket = r.socket as Socket;
    const frames: Array<{ opcode: number; payload: Buffer }> = [];
    let buf = r.head ?? Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        }
        if (buf.length < off + len) return;
        frames.push({ opcode: buf[0]! & 0x0f, payload: buf.subarray(off, off + len) });
        buf = buf.subarray(off + len);
      }
    });
    const masked = (opcode: number, payload: Buffer) => {
      const mask = Buffer.from([1, 2, 3, 4]);
      const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
      return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, body]);
    };
    socket.write(masked(0x9, Buffer.from('hi')));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise((res) => setTimeout(res, 100));
    expect(frames.find((f) => f.opcode === 0xa)?.payload.toString()).toBe('hi');
    socket.write(masked(0x8, Buffer.from([0x03, 0xe8])));
    await ended;
    const close = frames.find((f) => f.opcode === 0x8);
    expect(close?.payload.readUInt16BE(0)).toBe(1000);
  });
});

const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe.skipIf(!lanAddress)('GET /api/live on a non-loopback bind (0.0.0.0)', () => {
  let d: Daemon;
  let manageKey: string;
  beforeAll(async () => {
    d = await spawnDaemon({ host: '0.0.0.0' });
    manageKey = await d.createKey(['manage']);
  });
  afterAll(async () => {
    await d?.stop();
  });

  it(`refuses a client without Origin, through ${lanAddress} and through loopback`, async () => {
    for (const base of [`http://${lanAddress}:${d.port}`, d.url]) {
      const r = await rawUpgrade(base, '/api/live', { authorization: `Bearer ${manageKey}` });
      expect(r.status, base).toBe(403);
      expect(JSON.parse(r.body).error.message).toMatch(/Origin/);
    }
  });

  it('accepts an allowed Origin from a non-loopback caller with a manage key', async () => {
    const r = await rawUpgrade(`http://${lanAddress}:${d.port}`, '/api/live', { authorization: `Bearer ${manageKey}`, origin: `http://127.0.0.1:${d.port}` });
    expect(r.status).toBe(101);
    r.socket!.destroy();
  });

  it('still refuses a foreign Origin', async () => {
    const r = await rawUpgrade(`http://${lanAddress}:${d.port}`, '/api/live', { authorization: `Bearer ${manageKey}`, origin: 'https://evil.example' });
    expect(r.status).toBe(403);
  });
});
