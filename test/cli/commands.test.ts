/**
 * Every `router` command against one real daemon (spawned here) with a mock upstream behind it: `--json`
 * output is compared with what the daemon's own API says, human output is checked for its shape, and
 * errors must be one actionable line (no stack trace unless --debug).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN, freePort, REPO_ROOT, runRouter, describeResult } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let receiver: Receiver;
let apiKey: string;
let configDir: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock, receiver] = await Promise.all([startRouter(), startMockUpstream(), startReceiver()]);
  apiKey = await router.createKey(['proxy']);
  // Upstream answers: model gpt-fail is refused (a client error: no failover, one error row).
  mock.handle((req) => (req.model === 'gpt-fail' ? { type: 'status', status: 400, message: 'model refused' } : undefined));
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close(), receiver?.close()]);
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

async function chat(model: string) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.text();
  return res.status;
}

/** Waits until the request log holds `n` rows (usage rows are written in batches). */
async function waitForLogs(n: number) {
  for (let i = 0; i < 100; i++) {
    const r = await router.manage('GET', '/api/logs?limit=500');
    if (r.json.logs.length >= n) return r.json.logs;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the log never reached ${n} rows`);
}

describe('router status, token', () => {
  it('status --json is the daemon status; the human form names URL, pid, version and home', async () => {
    const s = json(await ok('status', '--json'));
    expect(s).toMatchObject({ running: true, pid: router.pid, url: router.url });
    expect((await ok('status')).stdout).toMatch(
      new RegExp(`^router is running at ${router.url}\\n  pid      ${router.pid}\\n  version  \\d+\\.\\d+\\.\\d+\\n  home     ${router.home}\\n  node     node-[0-9a-f]{8} \\(single machine\\)\\n  up       \\d+s\\n$`),
    );
  });

  it('token prints nothing secret unless --reveal; --reveal prints exactly the token', async () => {
    const plain = await ok('token');
    expect(plain.stdout).not.toContain(router.cliToken);
    expect(plain.stdout).toContain('router token --reveal');
    const j = json(await ok('token', '--json'));
    expect(j).toEqual({ header: 'x-router-cli-token', saltFile: join(router.home, 'cli-token.salt'), available: true });
    expect((await ok('token', '--reveal')).stdout).toBe(`${router.cliToken}\n`);
  });
});

describe('router keys, password, restart', () => {
  it('keys add/list/rename/rm: list --json is the API list; keys are masked', async () => {
    const k = json(await ok('keys', 'add', '--name', 'cli-k', '--scope', 'proxy', '--json'));
    expect(k.key).toMatch(/^rk_/);
    const list = json<any[]>(await ok('keys', 'list', '--json'));
    expect(list).toEqual((await router.manage('GET', '/api/keys')).json.keys);
    expect(JSON.stringify(list)).not.toContain(k.key);
    expect((await ok('keys', 'list')).stdout).toMatch(new RegExp(`\\n${k.id}\\s+cli-k\\s+\\S+\\s+proxy\\s+active\\s+default\\s+-`));
    expect((await ok('keys', 'rename', k.id, 'cli-k2')).stdout).toBe(`renamed key cli-k (${k.id}) to cli-k2\n`);
    expect((await ok('keys', 'rm', k.id)).stdout).toBe(`deleted key cli-k2 (${k.id})\n`);
    expect(json<any[]>(await ok('keys', 'list', '--json')).some((x) => x.id === k.id)).toBe(false);
  });

  it('password set reads a piped password; the dashboard login accepts it; too short is refused', async () => {
    const env = { ROUTER_CLI_CONFIG_DIR: configDir };
    const r = await runRouter(['password', 'set', '--home', router.home], { input: 'correct horse battery\n', env });
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toBe('password set; existing login sessions were ended');
    const login = await fetch(`${router.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'correct horse battery' }) });
    expect(login.status).toBe(200);
    const short = await runRouter(['password', 'set', '--home', router.home], { input: 'short', env });
    expect([short.exitCode, short.stderr]).toEqual([1, 'router: the password must have at least 8 characters.']);
  });

  it('restart stops and starts a daemon (real processes, its own state folder)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-restart-'));
    const env = { ROUTER_CLI_CONFIG_DIR: configDir };
    const port = String(await freePort());
    try {
      const a = await runRouter(['start', '--home', home, '--port', port], { env });
      expect(a.exitCode, describeResult(a)).toBe(0);
      const first = Number(/\(pid (\d+)\)/.exec(a.stdout)![1]);
      const r = await runRouter(['restart', '--home', home, '--port', port], { env });
      expect(r.exitCode, describeResult(r)).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^router stopped \\(pid ${first}\\)\\nrouter started at http://127\\.0\\.0\\.1:${port} \\(pid \\d+\\)$`));
      const s = await runRouter(['status', '--json', '--home', home], { env });
      expect(JSON.parse(s.stdout)).toMatchObject({ running: true });
      expect(JSON.parse(s.stdout).pid).not.toBe(first);
      if (process.platform === 'linux') {
        // The daemon runs with the flags and environment `router start` gives it (src/shared/daemon-flags.ts).
        const pid = JSON.parse(s.stdout).pid as number;
        expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--max-semi-space-size=4');
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        expect(environ).toContain(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? '2'}`);
      }
    } finally {
      await runRouter(['stop', '--home', home], { env });
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('router providers', () => {
  let main: { id: string };

  it('catalog --json lists what the daemon lists; --kind filters', async () => {
    const api = (await router.manage('GET', '/api/providers/catalog')).json.providers;
    expect(json(await ok('providers', 'catalog', '--json'))).toEqual(api);
    const local = json<any[]>(await ok('providers', 'catalog', '--kind', 'local', '--json'));
    expect(local.map((p) => p.id).sort()).toEqual(api.filter((p: any) => p.kind === 'local').map((p: any) => p.id).sort());
    expect(local.length).toBeGreaterThan(0);
  });

  it('add --json creates a connection with the key masked; list shows it with its circuit', async () => {
    main = json(await ok('providers', 'add', 'openai', '--name', 'main', '--api-key', 'sk-test-0123456789abcdef', '--base-url', mock.openaiBase, '--json'));
    expect(JSON.stringify(main)).not.toContain('sk-test-0123456789abcdef');
    expect(main).toEqual((await router.manage('GET', `/api/providers/${main.id}`)).json);
    const list = json<any[]>(await ok('providers', 'list', '--json'));
    expect(list).toEqual((await router.manage('GET', '/api/providers')).json.connections);
    const lines = (await ok('providers', 'list')).stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PROVIDER\s+NAME\s+CREDENTIAL\s+PRIORITY\s+STATE\s+TEST\s+CIRCUIT\s+COOLDOWN$/);
    expect(lines.find((l) => l.startsWith(main.id))).toMatch(/\s+openai\s+main\s+\S+\s+\d+\s+active\s+-\s+closed\s+-$/);
  });

  it('add --api-key-stdin reads the key from a pipe (real process)', async () => {
    const r = await runRouter(['providers', 'add', 'anthropic', '--name', 'piped', '--api-key-stdin', '--base-url', mock.anthropicBase, '--json', '--home', router.home], {
      input: 'sk-ant-piped-0123456789\n',
      env: { ROUTER_CLI_CONFIG_DIR: configDir },
    });
    expect(r.exitCode, describeResult(r)).toBe(0);
    const conn = JSON.parse(r.stdout);
    expect(conn).toMatchObject({ provider: 'anthropic', name: 'piped', authKind: 'api-key' });
    expect(r.stdout).not.toContain('sk-ant-piped-0123456789');
  });

  it('test <name> checks the upstream: ok with a model count; a dead upstream fails with exit 1', async () => {
    const t = json(await ok('providers', 'test', 'main', '--json'));
    expect(t).toMatchObject({ ok: true, models: 3 });
    expect((await ok('providers', 'test', 'main')).stdout).toMatch(/^ok: main \(openai\) answered in \d+ ms with 3 models\n$/);
    const dead = await freePort();
    const broken = json(await ok('providers', 'add', 'openai', '--name', 'dead', '--api-key', 'sk-dead-0123456789', '--base-url', `http://127.0.0.1:${dead}/v1`, '--json'));
    const r = await R('providers', 'test', broken.id);
    expect(r.exitCode, show(r)).toBe(1);
    expect(r.stdout).toMatch(/^failed: dead \(openai\): /);
    expect((await ok('providers', 'rm', 'dead')).stdout).toBe(`removed connection dead (${broken.id})\n`);
  });

  it('sync-models replaces the catalog with the upstream list; models shows them as synced', async () => {
    const s = json(await ok('providers', 'sync-models', 'main', '--json'));
    expect(s).toMatchObject({ provider: 'openai', count: 3 });
    const models = json<any[]>(await ok('models', '--provider', 'openai', '--json'));
    expect(models.map((m) => m.id).sort()).toEqual(['openai/gpt-4.1', 'openai/gpt-4o-mini', 'openai/text-embedding-3-small']);
    expect(models.every((m) => m.source === 'synced')).toBe(true);
  });

  it('nodes add/list/rm; a bad field is reported with its name', async () => {
    const node = json(await ok('providers', 'nodes', 'add', '--name', 'vllm', '--prefix', 'vllm', '--type', 'openai-compatible', '--base-url', mock.openaiBase, '--header', 'X-Team=ml', '--json'));
    expect(node).toMatchObject({ prefix: 'vllm', customHeaders: { 'X-Team': 'ml' } });
    expect(json(await ok('providers', 'nodes', 'list', '--json'))).toEqual((await router.manage('GET', '/api/provider-nodes')).json.nodes);
    expect((await ok('providers', 'nodes', 'list')).stdout).toMatch(/^ID\s+PREFIX\s+NAME\s+TYPE\s+API\s+BASE URL\s+CREATED \(UTC\)\n\S+\s+vllm\s+vllm\s+openai-compatible\s+chat\s+http/);
    const bad = await R('providers', 'nodes', 'add', '--name', 'x', '--prefix', 'Bad Prefix', '--type', 'openai-compatible', '--base-url', mock.openaiBase);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/^router: prefix: [^\n]*[^)]\n$/);
    expect((await ok('providers', 'nodes', 'rm', 'vllm')).stdout).toBe(`removed node vllm (${node.id})\n`);
    expect(json(await ok('providers', 'nodes', 'list', '--json'))).toEqual([]);
  });

  it('reset closes a circuit; an unknown connection is a one-line error', async () => {
    expect((await ok('providers', 'reset', 'openai')).stdout).toBe('no circuit of openai was open\n');
    const r = await R('providers', 'test', 'nope');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("router: no such connection 'nope'; see `router providers list`\n");
  });
});

describe('router models, combos, settings', () => {
  it('models lists combos and connected providers; --search filters; the table has a fixed header', async () => {
    await ok('combos', 'add', 'fast', '--model', 'openai/gpt-4o-mini', '--model', 'anthropic/claude-haiku-4-5');
    const all = json<any[]>(await ok('models', '--json'));
    // A combo's context length is the smallest of its known targets' (spec "Other records"): the openai
    // list was synced without lengths, but the model catalog knows gpt-4o-mini's 128,000 (issue 31).
    expect(all).toContainEqual({ id: 'fast', provider: 'combo', contextLength: 128_000, source: 'combo', available: true, availability: 'combo' });
    expect(all.some((m) => m.id.startsWith('anthropic/'))).toBe(true);
    const haiku = json<any[]>(await ok('models', '--search', 'HAIKU', '--json')).map((m) => m.id);
    expect(haiku).toContain('anthropic/claude-haiku-4-5');
    expect(haiku).toEqual(all.map((m) => m.id).filter((id: string) => id.toLowerCase().includes('haiku')));
    expect((await ok('models', '--provider', 'combo')).stdout).toBe('MODEL  PROVIDER  CONTEXT  SOURCE\nfast   combo     128,000  combo\n');
  });

  it('settings set/get round-trip through the daemon', async () => {
    expect((await ok('settings', 'set', 'allowPrivateWebhookDestinations', 'true')).stdout).toBe('allowPrivateWebhookDestinations = true\n');
    expect((await ok('settings', 'get', 'allowPrivateWebhookDestinations')).stdout).toBe('true\n');
    expect(json(await ok('settings', 'get', '--json'))).toEqual((await router.manage('GET', '/api/settings')).json);
  });
});

describe('router logs and usage after real traffic', () => {
  beforeAll(async () => {
    for (const m of ['openai/gpt-4o-mini', 'openai/gpt-4o-mini', 'fast', 'openai/gpt-fail']) await chat(m);
    await waitForLogs(4);
  });

  it('logs --json is the request log; filters narrow it; the table is oldest first', async () => {
    const all = json<any[]>(await ok('logs', '--json'));
    expect(all).toEqual((await router.manage('GET', '/api/logs?limit=50')).json.logs);
    expect(all).toHaveLength(4);
    const errors = json<any[]>(await ok('logs', '--status', 'error', '--json'));
    expect(errors.map((e) => [e.model, e.status])).toEqual([['gpt-fail', 400]]);
    expect(json<any[]>(await ok('logs', '--model', 'fast', '--json')).map((e) => e.requestedModel)).toEqual(['fast']);
    expect(json<any[]>(await ok('logs', '-n', '2', '--json'))).toHaveLength(2);
    const lines = (await ok('logs')).stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TIME \(UTC\)\s+STATUS\s+MODEL\s+REQUESTED\s+IN\s+OUT\s+COST\s+LATENCY\s+ERROR$/);
    expect(lines).toHaveLength(5);
    expect(lines[4]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+400\s+openai\/gpt-fail\s+-\s+/);
    expect(lines[3]).toMatch(/\s+200\s+openai\/gpt-4o-mini\s+fast\s+/);
  });

  it('logs rejects a bad --status or --since as a usage error (exit 2)', async () => {
    const r = await R('logs', '--status', '7xx');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^router: --status expects/);
    expect((await R('logs', '--since', 'yesterday')).exitCode).toBe(2);
  });

  it('usage --json holds the summary and the breakdown the daemon computes', async () => {
    const u = json(await ok('usage', '--period', '1h', '--json'));
    expect(u.summary).toMatchObject({ requests: 4, errors: 1, traces: 4 });
    const api = (await router.manage('GET', `/api/usage/breakdown?by=provider&from=${Date.parse(u.summary.from)}`)).json;
    expect(u.breakdown.by).toBe('provider');
    expect(u.breakdown.rows).toEqual(api.rows);
    const byModel = json(await ok('usage', '--by', 'model', '--json'));
    expect(byModel.breakdown.rows.map((r: any) => r.key).sort()).toEqual(['openai/gpt-4o-mini', 'openai/gpt-fail']);
    const text = (await ok('usage', '--by', 'model')).stdout;
    expect(text).toMatch(/^usage \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \.\. \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nrequests 4 \(client requests 4, errors 1, streamed 0\)\n/);
    expect(text).toMatch(/\nMODEL\s+REQUESTS\s+ERRORS\s+IN\s+OUT\s+COST\s+AVG LATENCY\nopenai\/gpt-4o-mini\s+3\s+0\s+/);
    expect((await R('usage', '--by', 'colour')).exitCode).toBe(2);
    expect((await R('usage', '--period', 'fortnight')).exitCode).toBe(2);
  });

  it('dashboard without a terminal prints one snapshot; --json has providers, combos and breakers', async () => {
    const d = json(await ok('dashboard', '--json'));
    expect(d.status).toMatchObject({ running: true, pid: router.pid });
    expect(d.providers.find((p: any) => p.provider === 'openai')).toMatchObject({ active: 1, total: 1, circuit: 'closed' });
    expect(d.combos.map((c: any) => c.name)).toEqual(['fast']);
    const text = (await ok('dashboard')).stdout;
    expect(text).toContain(`router `);
    expect(text).toMatch(/PROVIDER\s+CONNECTIONS\s+CIRCUIT\s+COOLDOWNS\n(.*\n)*openai\s+1\/1\s+closed\s+0/);
    expect(text).toMatch(/COMBO\s+STRATEGY\s+MODELS\nfast\s+priority\s+openai\/gpt-4o-mini, anthropic\/claude-haiku-4-5/);
  });
});

describe('router webhooks', () => {
  it('add prints the secret once; list masks it; test delivers a ping; rm deletes', async () => {
    const w = json(await ok('webhooks', 'add', receiver.url, '--event', 'request.failed', '--event', 'provider.error', '--description', 'cli test', '--json'));
    expect(w).toMatchObject({ url: receiver.url, kind: 'custom', events: ['request.failed', 'provider.error'], enabled: 1 });
    expect(w.secret.length).toBeGreaterThanOrEqual(16);
    const list = json<any[]>(await ok('webhooks', 'list', '--json'));
    expect(list).toEqual((await router.manage('GET', '/api/webhooks')).json.webhooks);
    expect(list[0].secret).toMatch(/\.\.\.$/);
    expect((await ok('webhooks', 'list')).stdout).not.toContain(w.secret);
    const t = json(await ok('webhooks', 'test', w.id, '--json'));
    expect(t).toMatchObject({ delivered: true, status: 200 });
    await receiver.waitFor(1);
    expect(JSON.parse(receiver.requests.at(-1)!.body)).toMatchObject({ event: 'test.ping' });
    expect((await ok('webhooks', 'rm', w.id)).stdout).toBe(`deleted webhook ${w.id}\n`);
    expect(json(await ok('webhooks', 'list', '--json'))).toEqual([]);
  });

  it('a refused destination is a validation error naming the field', async () => {
    await ok('settings', 'set', 'allowPrivateWebhookDestinations', 'false');
    const r = await R('webhooks', 'add', 'http://127.0.0.1:9/hook');
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^router: url: [^\n]*not public[^\n]*allowPrivateWebhookDestinations[^\n]*\n$/);
  });
});

describe('router memory', () => {
  it('add --json stores a memory; list pages it with stats; search previews retrieval; rm deletes', async () => {
    const m = json(await ok('memory', 'add', 'deploy', 'Production deploys run from the release branch only', '--metadata', '{"team":"infra"}', '--json'));
    expect(m).toMatchObject({ key: 'deploy', type: 'factual', apiKeyId: null, metadata: { team: 'infra' } });
    expect(m).toEqual((await router.manage('GET', `/api/memory/${m.id}`)).json);
    const other = json(await ok('memory', 'add', 'editor', 'Prefers Neovim', '--type', 'semantic', '--json'));
    const list = json(await ok('memory', 'list', '--json'));
    expect(list).toEqual((await router.manage('GET', '/api/memory')).json);
    expect(list.data.map((x: any) => x.key).sort()).toEqual(['deploy', 'editor']);
    expect(json(await ok('memory', 'list', '--type', 'semantic', '--json')).data.map((x: any) => x.id)).toEqual([other.id]);
    const text = (await ok('memory', 'list')).stdout;
    expect(text).toMatch(/^ID\s+TYPE\s+KEY\s+CONTENT\s+TOKENS\s+HITS\s+SCOPE\n/);
    expect(text).toMatch(/\npage 1 of 1 · 2 memories · \d+ tokens · hit rate 0%\n$/);
    const found = json(await ok('memory', 'search', 'release branch deploys', '--strategy', 'exact', '--json'));
    expect(found.memories.map((x: any) => x.id)).toContain(m.id);
    expect(found.resolution.strategyUsed).toBe('exact');
    expect((await ok('memory', 'search', 'release branch', '--strategy', 'exact')).stdout).toMatch(/^strategy exact · .*\n\nSCORE\s+TIER\s+ID/);
    expect((await R('memory', 'search', 'x', '--strategy', 'fuzzy')).exitCode).toBe(2);
    expect((await ok('memory', 'rm', m.id)).stdout).toBe(`deleted memory ${m.id}\n`);
    const gone = await R('memory', 'rm', m.id);
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toBe(`router: no such memory '${m.id}'; see \`router memory list\`\n`);
  });
});

describe('router config-tool with the daemon creating the key', () => {
  it('creates a proxy key named for the tool, writes it, and undo restores the file', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-tool-home-'));
    try {
      const r = json(await ok('config-tool', 'claude-code', '--config-home', home, '--yes', '--json'));
      const keys = (await router.manage('GET', '/api/keys')).json.keys;
      expect(keys.find((k: any) => k.id === r.keyId)).toMatchObject({ name: 'config-tool claude-code', scopes: ['proxy'] });
      const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
      expect(settings.env).toMatchObject({ ANTHROPIC_BASE_URL: router.url, ANTHROPIC_MODEL: 'anthropic/claude-sonnet-4-5' });
      // The written key works against the daemon.
      const res = await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${settings.env.ANTHROPIC_AUTH_TOKEN}` } });
      expect(res.status).toBe(200);
      const undo = await ok('config-tool', 'claude-code', '--config-home', home, '--undo', '--yes');
      expect(undo.stdout).toContain(`router keys rm ${r.keyId}`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('errors a person can act on', () => {
  it('daemon not running: try `router start`, exit 1, no stack; --debug adds the stack', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-none-'));
    const port = String(await freePort());
    try {
      const r = await run(['keys', 'list', '--home', home, '--port', port]);
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toBe(`router: the router daemon is not running at http://127.0.0.1:${port}; try \`router start\`.\n`);
      const d = await run(['keys', 'list', '--home', home, '--port', port, '--debug']);
      expect(d.stderr).toMatch(/\n\s+at /);
      const s = await run(['status', '--home', home, '--port', port]);
      expect([s.exitCode, s.stdout]).toEqual([1, 'router is not running\n']);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('401 is explained: the token comes from the state folder', async () => {
    const other = mkdtempSync(join(tmpdir(), 'router-other-'));
    try {
      const r = await run(['keys', 'list', '--home', other, '--host', '127.0.0.1', '--port', new URL(router.url).port]);
      expect(r.exitCode).toBe(1);
      const [first, second] = r.stderr.trim().split('\n');
      expect(first).toMatch(/^router: not authorized: /);
      expect(second).toMatch(/same user and --home as the daemon/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a daemon of another version: one warning, the command still works', async () => {
    const fake: Server = createServer((req, res) => {
      res.setHeader('x-router-version', '9.9.9');
      res.setHeader('content-type', 'application/json');
      res.end(req.url === '/api/settings' ? '{"requireLogin":true}' : '{}');
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    try {
      const port = String((fake.address() as { port: number }).port);
      const r = await run(['settings', 'get', '--host', '127.0.0.1', '--port', port, '--home', router.home]);
      expect(r.exitCode, show(r)).toBe(0);
      expect(r.stderr).toMatch(/^warning: the daemon runs router 9\.9\.9 but this CLI is \d+\.\d+\.\d+; run `router restart`\.\n$/);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });

  it('usage errors exit 2: unknown command, missing argument, bad option value', async () => {
    expect((await R('nonsense')).exitCode).toBe(2);
    expect((await R('webhooks', 'add')).exitCode).toBe(2);
    expect((await R('completion', 'tcsh')).exitCode).toBe(2);
    const r = await R('providers', 'add', 'openai', '--priority', 'high');
    expect(r.exitCode).toBe(2);
  });
});

describe('live commands without a terminal (real processes)', () => {
  const spawnCli = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args, '--home', router.home], { cwd: REPO_ROOT, reject: false, env: { ROUTER_CLI_CONFIG_DIR: configDir }, stdin: 'ignore' });

  /** Collects stdout lines of a child until `pred` holds for them. */
  function lines(child: ReturnType<typeof spawnCli>) {
    const got: string[] = [];
    let buf = '';
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      got.push(...parts);
    });
    return {
      got,
      async until(pred: (l: string[]) => boolean, what: string) {
        for (let i = 0; i < 200; i++) {
          if (pred(got)) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error(`timed out waiting for ${what}; got:\n${got.join('\n')}`);
      },
    };
  }

  it('logs -f --json prints the history, then follows new requests as JSON lines; SIGTERM ends it with 0', async () => {
    const child = spawnCli('logs', '-f', '--json', '--provider', 'openai');
    const out = lines(child);
    await out.until((l) => l.length >= 4, 'the history');
    expect(out.got.map((l) => JSON.parse(l).model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-fail']);
    expect(await chat('openai/gpt-4.1')).toBe(200);
    await out.until((l) => l.length >= 5, 'the live request');
    expect(JSON.parse(out.got[4]!)).toMatchObject({ provider: 'openai', model: 'gpt-4.1', status: 200 });
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(0);
  });

  it('logs -f (plain) prints one line per request', async () => {
    const child = spawnCli('logs', '-f', '-n', '1');
    const out = lines(child);
    await out.until((l) => l.length >= 1, 'the history');
    expect(out.got[0]).toMatch(/^\d\d:\d\d:\d\d {2}200 {2}openai\/gpt-4\.1 {2}\S+ -> \S+ tok {2}\$\S+ {2}\d+ms$/);
    child.kill('SIGINT');
    expect((await child).exitCode).toBe(0);
  });

  it('usage --live --json prints one object per interval; inspect --json streams requests', async () => {
    const usage = spawnCli('usage', '--live', '--json', '--interval', '1');
    const inspect = spawnCli('inspect', '--json');
    const u = lines(usage);
    const i = lines(inspect);
    await u.until((l) => l.length >= 1, 'a first interval');
    expect(await chat('openai/gpt-4o-mini')).toBe(200);
    await u.until((l) => l.some((x) => JSON.parse(x).requests >= 1), 'an interval with the request');
    await i.until((l) => l.length >= 1, 'the inspected request');
    expect(JSON.parse(i.got[0]!)).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini', endpoint: '/v1/chat/completions' });
    const last = JSON.parse(u.got.at(-1)!);
    expect(last).toMatchObject({ intervalSeconds: 1, total: { requests: 1 } });
    usage.kill('SIGTERM');
    inspect.kill('SIGTERM');
    expect((await usage).exitCode).toBe(0);
    expect((await inspect).exitCode).toBe(0);
  });
});
