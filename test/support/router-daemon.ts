import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { deriveCliToken } from '../../src/shared/cli-token.js';

const ENTRY = fileURLToPath(new URL('../../dist/daemon/entry.js', import.meta.url));

export interface RouterProcess {
  /** Always reached over loopback, whatever the bind address (0.0.0.0 accepts loopback too). */
  url: string;
  port: number;
  home: string;
  pid: number;
  cliToken: string;
  /** A management call authenticated with the CLI token. */
  manage<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
  /** Creates an API key and returns it whole. */
  createKey(scopes?: string[]): Promise<string>;
  /** Adds a provider connection. */
  addConnection(body: Record<string, unknown>): Promise<{ id: string }>;
  stop(): Promise<void>;
}

/**
 * Spawns the real daemon process (built dist/) on a temp state folder and port 0; resolves once the daemon
 * reports ready over IPC with its URL. `stop()` asks for a graceful shutdown and waits for the exit.
 */
export async function startRouter(
  options: { home?: string; keepHome?: boolean; host?: string; port?: number; env?: Record<string, string> } = {},
): Promise<RouterProcess> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'router-e2e-'));
  const nonce = 'test';
  const host = options.host ?? '127.0.0.1';
  const child: ResultPromise = execa(process.execPath, [ENTRY, '--home', home, '--host', host, '--port', String(options.port ?? 0)], {
    ipc: true,
    serialization: 'json',
    reject: false,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
    env: { ROUTER_START_NONCE: nonce, ...options.env },
  });
  const msg = (await Promise.race([
    child.getOneMessage(),
    child.then((r) => ({ type: 'exit', stderr: r.stderr })),
  ])) as { type: string; url?: string; pid?: number; message?: string; stderr?: string };
  if (msg.type !== 'ready') throw new Error(`router did not start: ${JSON.stringify(msg)}`);
  const port = Number(new URL(msg.url!).port);
  const url = `http://127.0.0.1:${port}`;
  const cliToken = deriveCliToken(join(home, 'cli-token.salt'))!;
  const manage = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-router-cli-token': cliToken, ...(body !== undefined || method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
  return {
    url,
    port,
    home,
    pid: msg.pid!,
    cliToken,
    manage,
    async createKey(scopes = ['proxy']) {
      const r = await manage('POST', '/api/keys', { name: `test-${randomBytes(4).toString('hex')}`, scopes });
      if (r.status !== 201) throw new Error(`key create failed: ${JSON.stringify(r.json)}`);
      return r.json.key as string;
    },
    async addConnection(body) {
      const r = await manage('POST', '/api/providers', body);
      if (r.status !== 201) throw new Error(`connection create failed: ${JSON.stringify(r.json)}`);
      return r.json;
    },
    async stop() {
      try {
        child.disconnect();
      } catch {
        // already disconnected
      }
      await manage('POST', '/api/system/shutdown').catch(() => child.kill('SIGTERM'));
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await child;
      clearTimeout(timer);
      if (!options.keepHome && !options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** One non-streamed chat completion with a proxy key: the status and the parsed body. */
export async function chatAs(url: string, key: string, model: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, json: await res.json() };
}
