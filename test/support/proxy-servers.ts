/**
 * Test proxies on real sockets: an HTTP CONNECT proxy and a SOCKS5 proxy (no authentication). Each records
 * the `host:port` every tunnel asked for and can map names to addresses of its own (as a proxy on another
 * network would resolve names router cannot), or send every tunnel to one fixed address.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface TestProxy {
  /** e.g. `http://127.0.0.1:1234` or `socks5://127.0.0.1:1234`. */
  url: string;
  /** `host:port` of every tunnel asked for, in order (a kept-alive tunnel carries many requests). */
  targets: string[];
  /** `METHOD /path` of every plain-HTTP request carried through a tunnel, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface TestProxyOptions {
  /** Names the proxy resolves itself (host -> address). */
  hosts?: Record<string, string>;
  /** Every tunnel goes here, whatever was asked (`host:port`). */
  forwardAllTo?: string;
}

function destination(host: string, port: number, opts: TestProxyOptions): { host: string; port: number } {
  if (opts.forwardAllTo) {
    const i = opts.forwardAllTo.lastIndexOf(':');
    return { host: opts.forwardAllTo.slice(0, i), port: Number(opts.forwardAllTo.slice(i + 1)) };
  }
  return { host: opts.hosts?.[host] ?? host, port };
}

/** Records the request lines of plain HTTP passing from client to upstream through a tunnel. */
function tap(client: Socket, requests: string[]): void {
  client.on('data', (chunk: Buffer) => {
    for (const m of chunk.toString('latin1').matchAll(/(?:^|\r\n)(GET|POST|PUT|PATCH|DELETE) (\S+) HTTP\/1\.1\r\n/g)) requests.push(`${m[1]} ${m[2]}`);
  });
}

function closer(server: Server | HttpServer, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** An HTTP proxy that only tunnels (CONNECT), as router's proxied calls always ask for a tunnel. */
export async function startHttpConnectProxy(opts: TestProxyOptions = {}): Promise<TestProxy> {
  const targets: string[] = [];
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(405).end('CONNECT only');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    const i = (req.url ?? '').lastIndexOf(':');
    const dest = destination(req.url!.slice(0, i).replace(/^\[|\]$/g, ''), Number(req.url!.slice(i + 1)), opts);
    const upstream = connect(dest.port, dest.host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      tap(client, requests);
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, targets, requests, close: closer(server, sockets) };
}

/** A SOCKS5 proxy (RFC 1928, method 0 "no authentication", command CONNECT). */
export async function startSocks5Proxy(opts: TestProxyOptions = {}): Promise<TestProxy> {
  const targets: string[] = [];
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    let buf = Buffer.alloc(0);
    let stage: 'greeting' | 'request' | 'done' = 'greeting';
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 'greeting') {
        if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
        if (buf[0] !== 5) return client.destroy();
        buf = buf.subarray(2 + buf[1]!);
        client.write(Buffer.from([5, 0]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buf.length < 5) return;
        const atyp = buf[3]!;
        let host: string;
        let at: number;
        if (atyp === 1) {
          if (buf.length < 10) return;
          host = [...buf.subarray(4, 8)].join('.');
          at = 8;
        } else if (atyp === 3) {
          const len = buf[4]!;
          if (buf.length < 5 + len + 2) return;
          host = buf.subarray(5, 5 + len).toString('latin1');
          at = 5 + len;
        } else if (atyp === 4) {
          if (buf.length < 22) return;
          host = (buf.subarray(4, 20).toString('hex').match(/.{4}/g) ?? []).join(':');
          at = 20;
        } else return client.destroy();
        const port = buf.readUInt16BE(at);
        const rest = buf.subarray(at + 2);
        stage = 'done';
        client.off('data', onData);
        targets.push(`${host}:${port}`);
        const dest = destination(host, port, opts);
        const upstream = connect(dest.port, dest.host);
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.once('connect', () => {
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          tap(client, requests);
          if (rest.length) upstream.write(rest);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', () => {
          // 5 = connection refused (RFC 1928 reply codes)
          if (!client.destroyed) client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]));
        });
        client.on('close', () => upstream.destroy());
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `socks5://127.0.0.1:${port}`, targets, requests, close: closer(server, sockets) };
}

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
