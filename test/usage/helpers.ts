import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

export type Daemon = RouterProcess;

/**
 * Spawns the built daemon (dist/) through test/support/router-daemon.ts, with a choice of bind host, extra
 * environment and a kept state folder (to reopen its database after a stop).
 */
export function spawnDaemon(opts: { host?: string; env?: Record<string, string>; home?: string } = {}): Promise<Daemon> {
  return startRouter({ home: opts.home, host: opts.host, env: opts.env });
}

/** What a raw WebSocket upgrade attempt got: 101 with the socket, or the refusal's status and body. */
export interface UpgradeResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  socket?: Socket;
  /** Bytes that arrived with the 101 reply (the first frames may be there). */
  head?: Buffer;
}

/** Sends `GET path` with WebSocket upgrade headers (plus `headers`) and reports what came back. */
export function rawUpgrade(baseUrl: string, path: string, headers: Record<string, string>): Promise<UpgradeResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, {
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket, head) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', socket, head }));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads whole unmasked server text frames from an upgraded socket. */
export function frameReader(socket: Socket, head?: Buffer): { next: (pred: (msg: any) => boolean, timeoutMs?: number) => Promise<any> } {
  let buf = Buffer.alloc(0);
  const messages: any[] = [];
  const waiters: Array<{ pred: (m: any) => boolean; resolve: (m: any) => void }> = [];
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      let len = buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      if (buf.length < off + len) return;
      const opcode = buf[0]! & 0x0f;
      const payload = buf.subarray(off, off + len).toString('utf8');
      buf = buf.subarray(off + len);
      if (opcode !== 1) continue;
      const msg = JSON.parse(payload);
      const w = waiters.findIndex((x) => x.pred(msg));
      if (w >= 0) waiters.splice(w, 1)[0]!.resolve(msg);
      else messages.push(msg);
    }
  };
  socket.on('data', onData);
  if (head?.length) onData(head);
  return {
    next(pred, timeoutMs = 5_000) {
      const i = messages.findIndex(pred);
      if (i >= 0) return Promise.resolve(messages.splice(i, 1)[0]);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no matching live message')), timeoutMs);
        waiters.push({ pred, resolve: (m) => (clearTimeout(t), resolve(m)) });
      });
    },
  };
}

/** Polls until `fn` returns a value (not undefined) or the time is up. */
export async function eventually<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
