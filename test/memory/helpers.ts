import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import type { Services } from '../../src/daemon/services.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/memory/', import.meta.url));

export interface Corpus {
  memories: Array<{ id: string; type: string; key: string; content: string }>;
  queries: Array<{ query: string; relevant: string[] }>;
}

export function loadCorpus(): Corpus {
  return JSON.parse(readFileSync(join(FIXTURES, 'corpus.json'), 'utf8')) as Corpus;
}

export function loadTopics(): Record<string, string[]> {
  return (JSON.parse(readFileSync(join(FIXTURES, 'topics.json'), 'utf8')) as { topics: Record<string, string[]> }).topics;
}

/** Deterministic noise in [-1, 1) from a word and a dimension. */
function noise(word: string, dim: number): number {
  const h = createHash('sha256').update(`${word}#${dim}`).digest();
  return h.readUInt32LE(0) / 2 ** 31 - 1;
}

/**
 * Writes a tiny static embedding model (router's simple format) into `dir`: one dimension per topic (plus
 * `extraDims` of pure noise), a word's row = the sum of its topics' unit vectors + 0.1 noise.
 */
export function writeStaticModel(dir: string, opts: { name?: string; extraDims?: number; topics?: Record<string, string[]> } = {}): string {
  const topics = opts.topics ?? loadTopics();
  const names = Object.keys(topics);
  const dims = names.length + (opts.extraDims ?? 0);
  const rows = new Map<string, Float32Array>();
  names.forEach((topic, t) => {
    for (const word of topics[topic]!) {
      let row = rows.get(word);
      if (!row) {
        row = new Float32Array(dims);
        for (let d = 0; d < dims; d++) row[d] = 0.1 * noise(word, d);
        rows.set(word, row);
      }
      row[t]! += 1;
    }
  });
  mkdirSync(dir, { recursive: true });
  const vocab = [...rows.keys()];
  const buf = Buffer.alloc(vocab.length * dims * 4);
  vocab.forEach((w, i) => rows.get(w)!.forEach((v, d) => buf.writeFloatLE(v, (i * dims + d) * 4)));
  writeFileSync(join(dir, 'vocab.txt'), `${vocab.join('\n')}\n`);
  writeFileSync(join(dir, 'embeddings.f32'), buf);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model: opts.name ?? 'topic-static', dimensions: dims }));
  return dir;
}

export interface TestApp {
  home: string;
  services: Services;
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; headers: Headers }>;
  close(): void;
}

/** Boots the daemon's services in-process on a temp home and returns a management-authenticated caller. */
export async function startApp(): Promise<TestApp> {
  const home = mkdtempSync(join(tmpdir(), 'router-memory-'));
  const log = new Logger({ file: join(home, 'daemon.log') });
  const services = await bootServices({ home, host: '127.0.0.1', port: 0, log });
  const app = buildApp(services);
  return {
    home,
    services,
    async request(method, path, body, headers = {}) {
      const h: Record<string, string> = { 'x-router-cli-token': services.cliToken, ...headers };
      let payload: string | undefined;
      if (body !== undefined) {
        h['content-type'] = 'application/json';
        payload = typeof body === 'string' ? body : JSON.stringify(body);
      }
      const res = await app.request(path, { method, headers: h, body: payload }, { remoteAddress: '127.0.0.1' } as never);
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = text;
      }
      return { status: res.status, json, headers: res.headers };
    },
    close() {
      closeServices(services);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** sha256 over every row of the memory tables (and the vec0 table when it exists). */
export function memoryChecksum(services: Services): string {
  const db = services.db;
  const h = createHash('sha256');
  for (const table of ['memories', 'memory_meta', 'memory_settings', 'memory_key_settings']) {
    for (const row of db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all()) h.update(JSON.stringify(row));
  }
  const vec = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get();
  if (vec) {
    for (const row of db.prepare('SELECT rowid, scope, embedding FROM memories_vec ORDER BY rowid').all() as Array<{ rowid: number; scope: string; embedding: Buffer }>) {
      h.update(`${row.rowid}|${row.scope}|${row.embedding.toString('hex')}`);
    }
  }
  for (const row of db.prepare("SELECT rowid, key, content FROM memories_fts WHERE memories_fts MATCH 'the OR a OR is' ORDER BY rowid").all()) {
    h.update(JSON.stringify(row));
  }
  return h.digest('hex');
}
