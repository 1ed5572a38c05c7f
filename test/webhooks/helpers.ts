import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import type { Resolver } from '../../src/daemon/webhooks/destination.js';
import type { DeliveryPolicy } from '../../src/daemon/webhooks/delivery.js';
import { WebhookService } from '../../src/daemon/webhooks/service.js';

/** One request a receiver saw. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What a receiver replies; `delayMs` holds the reply back. */
export interface Reply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A real HTTP receiver on loopback that records every request. */
export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  /** Replies in order; the last one repeats. Default 200 "ok". */
  reply: (...replies: Reply[]) => void;
  /** Resolves once `n` requests have arrived. */
  waitFor: (n: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
}

/** Starts a receiver on 127.0.0.1 with an ephemeral port. */
export async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  let replies: Reply[] = [{ status: 200, body: 'ok' }];
  let served = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const w of waiters.filter((w) => requests.length >= w.n)) w.resolve();
      const r = replies[Math.min(served++, replies.length - 1)]!;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(r.status ?? 200, r.headers);
        res.end(r.body ?? '');
      };
      if (r.delayMs) setTimeout(send, r.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    reply: (...r) => {
      replies = r;
      served = 0;
    },
    waitFor: (n, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const t = setTimeout(() => reject(new Error(`receiver saw ${requests.length} of ${n} requests`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An in-process daemon: services, app, and a management-authenticated request helper. */
export interface TestDaemon {
  services: Services;
  home: string;
  api: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  /** Replaces the webhook service with one using test timing and/or a resolver. */
  useWebhooks: (opts: { policy?: Partial<DeliveryPolicy>; resolve?: Resolver; telegramApiBase?: string }) => WebhookService;
  close: () => void;
}

/** Boots services in a temporary state folder; `allowPrivate` sets allowPrivateWebhookDestinations. */
export async function startDaemon(allowPrivate: boolean): Promise<TestDaemon> {
  const home = mkdtempSync(join(tmpdir(), 'router-webhooks-'));
  const services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  await services.settings.update({ allowPrivateWebhookDestinations: allowPrivate });
  const app = buildApp(services);
  return {
    services,
    home,
    async api(method, path, body) {
      const headers: Record<string, string> = { 'x-router-cli-token': services.cliToken };
      // As the CLI does: the daemon refuses a POST without this type, body or not.
      if (body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
      const res = await app.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }, { remoteAddress: '127.0.0.1' } as never);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    useWebhooks(opts) {
      services.webhooks.close();
      const ws = new WebhookService({ db: services.db, settings: services.settings, keyFile: services.paths.secretKey, ...opts });
      ws.attach(services.events);
      services.webhooks = ws;
      return ws;
    },
    close() {
      closeServices(services);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A resolver mapping names to fixed addresses (unknown names fail like NXDOMAIN). */
export function fakeResolver(map: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const fn = async (host: string) => {
    calls.push(host);
    const addrs = map[host];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(fn, { calls });
}

/**
 * Fast retry timing for unit tests. The attempt timeout is the product default (10 s): a loopback receiver on a
 * loaded machine can take more than 2 s to answer; tests of the timeout set their own policy.
 */
export const FAST: Partial<DeliveryPolicy> = { retryDelaysMs: [10, 20, 40], timeoutMs: 10_000 };
