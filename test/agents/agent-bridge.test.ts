/**
 * AgentBridge (GET /api/tools/agent-bridge/state) against a real daemon whose PATH holds fake agent binaries
 * (shell scripts printing versions, one that hangs) and whose HOME holds fake settings files: installed
 * agents with their versions, which settings point at this router, router's own endpoints; and who may ask
 * (spawn tier: loopback only, never a manage-scope key).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { deriveCliToken } from '../../src/shared/cli-token.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let root: string;
let bin: string;
let home: string;
let router: RouterProcess;

/** The daemon runs with the fake HOME, and its CLI token is derived from the home folder: derive it alike. */
async function bridgeState(): Promise<{ status: number; json: any }> {
  const saved = process.env.HOME;
  process.env.HOME = home;
  let token: string;
  try {
    token = deriveCliToken(join(router.home, 'cli-token.salt')) ?? '';
  } finally {
    process.env.HOME = saved;
  }
  const res = await fetch(`${router.url}/api/tools/agent-bridge/state`, { headers: { 'x-router-cli-token': token } });
  return { status: res.status, json: await res.json() };
}

function script(name: string, body: string) {
  const p = join(bin, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
}
function file(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'router-agent-bridge-'));
  bin = join(root, 'bin');
  home = join(root, 'home');
  mkdirSync(bin, { recursive: true });
  mkdirSync(home, { recursive: true });
  script('claude', 'echo "2.1.332 (Claude Code)"');
  // Counts its runs: `--version` is asked once per binary file, again only when the file changes.
  script('codex', `echo run >> "${'$'}{0%/*}/codex.runs"; echo "codex-cli 0.169.0"`);
  // A Gemini CLI that never answers --version: the reply must not wait for it beyond the timeout.
  script('gemini', 'sleep 30');
  writeFileSync(join(bin, 'opencode'), 'not executable');
  router = await startRouter({ env: { PATH: `${bin}:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: join(home, '.config') } });
  file(join(home, '.claude', 'settings.json'), JSON.stringify({ env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${router.port}` } }));
  file(join(home, '.codex', 'config.toml'), `model_provider = "router"\n[model_providers.router]\nbase_url = "http://localhost:${router.port}/v1"\n`);
  // Pointing at some other proxy is not "configured for router".
  file(join(home, '.config', 'opencode', 'opencode.json'), JSON.stringify({ provider: { other: { options: { baseURL: 'http://127.0.0.1:9/v1' } } } }));
  file(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: { router: { url: `http://127.0.0.1:${router.port}/api/mcp/stream` } } }));
});

afterAll(async () => {
  await router?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('GET /api/tools/agent-bridge/state', () => {
  it('lists installed agents with versions and whether their settings point at router', async () => {
    const t0 = Date.now();
    const r = await bridgeState();
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const byId = Object.fromEntries((r.json.agents as any[]).map((a) => [a.id, a]));
    expect(byId['claude-code']).toMatchObject({ installed: true, path: join(bin, 'claude'), version: '2.1.332', configured: true });
    expect(byId.codex).toMatchObject({ installed: true, version: '0.169.0', configured: true });
    expect(byId['gemini-cli']).toMatchObject({ installed: true, version: null, configured: false });
    // Present but not executable: not installed.
    expect(byId.opencode).toMatchObject({ installed: false, path: null, configured: false });
    expect(byId.opencode.files[0]).toMatchObject({ exists: true, pointsAtRouter: false });
    expect(byId.cursor).toMatchObject({ installed: false, configured: true });
    expect(byId.cursor.files[0]).toMatchObject({ pointsAtRouter: true, mcp: true });
    expect(byId.cline).toMatchObject({ installed: false, configured: false });
    expect(byId.cline.files.every((f: any) => f.exists === false)).toBe(true);
  });

  it('asks a binary its version once, and again after it changes (a hung one costs the timeout once)', async () => {
    const runs = () => readFileSync(join(bin, 'codex.runs'), 'utf8').split('\n').filter(Boolean).length;
    const before = runs();
    const r = await bridgeState();
    expect(Object.fromEntries((r.json.agents as any[]).map((a) => [a.id, a.version])).codex).toBe('0.169.0');
    expect(runs()).toBe(before);
    // An upgrade (a new file in its place) is asked again.
    script('codex', `echo run >> "${'$'}{0%/*}/codex.runs"; echo "codex-cli 0.170.1"`);
    const after = await bridgeState();
    expect(Object.fromEntries((after.json.agents as any[]).map((a) => [a.id, a.version])).codex).toBe('0.170.1');
    expect(runs()).toBe(before + 1);
  });

  it("names router's own endpoints for agents", async () => {
    const r = await bridgeState();
    expect(r.json.server).toMatchObject({
      baseUrl: router.url,
      endpoints: {
        openai: `${router.url}/v1`,
        anthropic: router.url,
        mcp: { streamableHttp: `${router.url}/api/mcp/stream`, sse: `${router.url}/api/mcp/sse` },
        a2a: { agentCard: `${router.url}/.well-known/agent-card.json`, jsonRpc: `${router.url}/api/a2a` },
      },
    });
    expect(typeof r.json.server.version).toBe('string');
  });
});

describe('who may ask', () => {
  it('loopback with management credentials only; a manage-scope key never, a remote caller never', async () => {
    const h = mkdtempSync(join(tmpdir(), 'router-agent-bridge-tier-'));
    const services = await bootServices({ home: h, host: '127.0.0.1', port: 0 });
    try {
      const app = buildApp(services);
      const manageKey = (await services.keys.create('manage', ['manage'])).key;
      const get = async (addr: string, headers: Record<string, string>) =>
        (await app.request('http://router.test/api/tools/agent-bridge/state', { headers }, { remoteAddress: addr })).status;
      expect(await get('127.0.0.1', { 'x-router-cli-token': services.cliToken })).toBe(200);
      expect(await get('127.0.0.1', { authorization: `Bearer ${manageKey}` })).toBe(403);
      expect(await get('203.0.113.7', { authorization: `Bearer ${manageKey}` })).toBe(403);
      expect(await get('203.0.113.7', {})).toBeGreaterThanOrEqual(401);
    } finally {
      closeServices(services);
      rmSync(h, { recursive: true, force: true });
    }
  });
});
