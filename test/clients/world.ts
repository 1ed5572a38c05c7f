/**
 * The world a real coding agent meets: a router daemon started the way a new user starts it (the CLI,
 * `router start`, in a HOME that has never seen router), provider accounts added with the CLI and pointed at
 * the mock upstreams, and a recording pass-through in front of the daemon that keeps every request the agent
 * sends (headers and body, byte for byte) for the fixtures the default suite replays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { describeResult, freePort, killDaemonOf, runRouter } from '../support/cli.js';

export interface RecordedRequest {
  method: string;
  /** Path and query as the agent sent them. */
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The status router answered. */
  status?: number;
}

export interface World {
  mock: MockUpstream;
  /** The daemon's own address. */
  routerUrl: string;
  /** The recording pass-through agents are pointed at (same paths as the daemon). */
  url: string;
  /** A proxy-scope key, made with `router keys add`. */
  key: string;
  /** The HOME the daemon runs in (its state is `$HOME/.router`). */
  home: string;
  /** Requests the agents sent since the last `take()`. */
  take(): RecordedRequest[];
  /** Runs the router CLI as the world's user. */
  cli(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Upstream routes the agents are driven through: name -> model id as the agent asks for it. Slashes in
 * the upstream model names are deliberate (OpenRouter-style ids, a node prefix before them).
 */
export const ROUTES = {
  /** Chat Completions (OpenRouter-style id with a slash). */
  chat: 'openrouter/qwen/qwen3-coder',
  /** OpenAI: Chat Completions for Chat/Anthropic/Gemini clients, Responses passed through for Responses clients. */
  openai: 'openai/gpt-4o',
  /** A Responses-API node, model id with a slash. */
  responses: 'resp/openai/gpt-5',
  anthropic: 'anthropic/claude-sonnet-4-5',
  gemini: 'gemini/gemini-2.5-flash',
} as const;

function recorder(target: string, log: RecordedRequest[]): Promise<Server> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const entry: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers, body: body.toString('utf8') };
      log.push(entry);
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          entry.status = up.statusCode;
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`recorder: ${err.message}`);
      });
      out.end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function startWorld(): Promise<World> {
  const mock = await startMockUpstream();
  const home = mkdtempSync(join(tmpdir(), 'router-clients-'));
  const port = await freePort();
  const env = { HOME: home };
  const cli = async (args: string[], input?: string) => {
    const r = await runRouter([...args, '--port', String(port)], { env, input, timeoutMs: 60_000 });
    if (r.exitCode !== 0) throw new Error(`router ${args.join(' ')} failed: ${describeResult(r)}`);
    return r.stdout;
  };
  // A new user's first command, in a HOME that has no ~/.router yet.
  await cli(['start']);
  const routerUrl = `http://127.0.0.1:${port}`;
  const key = (JSON.parse(await cli(['keys', 'add', '--name', 'agents', '--json'])) as { key: string }).key;
  await cli(['providers', 'add', 'openai', '--api-key-stdin', '--base-url', mock.openaiBase], 'sk-test-openai');
  await cli(['providers', 'add', 'openrouter', '--api-key-stdin', '--base-url', mock.openaiBase], 'sk-test-openrouter');
  await cli(['providers', 'add', 'anthropic', '--api-key-stdin', '--base-url', mock.anthropicBase], 'sk-test-anthropic');
  await cli(['providers', 'add', 'gemini', '--api-key-stdin', '--base-url', mock.geminiBase], 'sk-test-gemini');
  await cli(['providers', 'nodes', 'add', '--name', 'Responses node', '--prefix', 'resp', '--type', 'openai-compatible', '--api-type', 'responses', '--base-url', mock.openaiBase]);
  await cli(['providers', 'add', 'resp', '--api-key-stdin'], 'sk-test-resp');

  const log: RecordedRequest[] = [];
  const rec = await recorder(routerUrl, log);
  const url = `http://127.0.0.1:${(rec.address() as AddressInfo).port}`;
  return {
    mock,
    routerUrl,
    url,
    key,
    home,
    cli,
    take: () => log.splice(0, log.length),
    async stop() {
      await new Promise<void>((r) => {
        rec.close(() => r());
        rec.closeAllConnections();
      });
      await runRouter(['stop', '--port', String(port)], { env }).catch(() => undefined);
      await killDaemonOf(join(home, '.router'));
      await mock.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
