import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface Collection {
  size: number;
  distance: string;
  points: Map<string, { vector: number[]; payload: Record<string, unknown> }>;
}

export interface MockQdrant {
  url: string;
  collections: Map<string, Collection>;
  requests: Array<{ method: string; path: string; body: any; headers: Record<string, string | string[] | undefined> }>;
  /** 'up' answers; 'error' answers 503 to everything. */
  mode: 'up' | 'error';
  /** Stops listening (connections refused) while keeping the data; `start()` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** An in-memory subset of Qdrant's REST API: collections, points upsert/delete, search with a match-any filter. */
export async function startMockQdrant(): Promise<MockQdrant> {
  const collections = new Map<string, Collection>();
  const requests: MockQdrant['requests'] = [];
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server;

  const reply = (res: import('node:http').ServerResponse, status: number, result: unknown, error?: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(error ? { status: { error }, time: 0 } : { result, status: 'ok', time: 0.0001 }));
  };

  const handler = async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? JSON.parse(text) : undefined;
    const url = new URL(req.url!, 'http://x');
    requests.push({ method: req.method!, path: url.pathname, body, headers: req.headers });
    if (mock.mode === 'error') return reply(res, 503, null, 'service unavailable');
    const m = /^\/collections\/([^/]+)(\/points(?:\/(search|delete))?)?$/.exec(url.pathname);
    if (!m) return reply(res, 404, null, 'not found');
    const name = decodeURIComponent(m[1]!);
    const col = collections.get(name);
    if (!m[2]) {
      if (req.method === 'GET') {
        if (!col) return reply(res, 404, null, `Collection \`${name}\` doesn't exist!`);
        return reply(res, 200, { status: 'green', points_count: col.points.size, config: { params: { vectors: { size: col.size, distance: col.distance } } } });
      }
      if (req.method === 'PUT') {
        if (col) return reply(res, 409, null, `Collection \`${name}\` already exists!`);
        collections.set(name, { size: body.vectors.size, distance: body.vectors.distance, points: new Map() });
        return reply(res, 200, true);
      }
      if (req.method === 'DELETE') {
        collections.delete(name);
        return reply(res, 200, true);
      }
    }
    if (!col) return reply(res, 404, null, `Collection \`${name}\` doesn't exist!`);
    if (m[2] === '/points' && req.method === 'PUT') {
      for (const p of body.points) {
        if (p.vector.length !== col.size) return reply(res, 400, null, `Wrong input: Vector dimension error: expected dim: ${col.size}, got ${p.vector.length}`);
        col.points.set(String(p.id), { vector: p.vector, payload: p.payload ?? {} });
      }
      return reply(res, 200, { operation_id: 1, status: 'completed' });
    }
    if (m[3] === 'delete' && req.method === 'POST') {
      for (const id of body.points) col.points.delete(String(id));
      return reply(res, 200, { operation_id: 2, status: 'completed' });
    }
    if (m[3] === 'search' && req.method === 'POST') {
      const any: unknown[] | undefined = body.filter?.must?.find((f: any) => f.key === 'scope')?.match?.any;
      const hits = [...col.points.entries()]
        .filter(([, p]) => !any || any.includes(p.payload.scope))
        .map(([id, p]) => ({ id, version: 1, score: cosine(body.vector, p.vector) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, body.limit ?? 10);
      return reply(res, 200, hits);
    }
    return reply(res, 404, null, 'not found');
  };

  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((req, res) => void handler(req, res));
      server.on('connection', (s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });

  await listen();
  const mock: MockQdrant = {
    url: `http://127.0.0.1:${port}`,
    collections,
    requests,
    mode: 'up',
    stop,
    start: listen,
    close: stop,
  };
  return mock;
}
