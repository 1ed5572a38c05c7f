/**
 * The CLI without a daemon: help with examples on every command, completion scripts run in real shells,
 * the CLI's own config, the rule that plain commands never load Ink/React (start-up cost), the error
 * mapping of the client, and snapshots of the human output with fixed data (stable widths).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { replyError } from '../../src/cli/client.js';
import { formatConnections, formatCatalog, formatNodes } from '../../src/cli/commands/providers.js';
import { formatLogLine, formatLogs } from '../../src/cli/commands/logs.js';
import { formatModels } from '../../src/cli/commands/models.js';
import { formatUsage, periodRange } from '../../src/cli/commands/usage.js';
import { formatWebhooks } from '../../src/cli/commands/webhooks.js';
import { commandTree } from '../../src/cli/commands/completion.js';
import { resetCliConfigCache } from '../../src/cli/config.js';
import { sparkline, tokens, usd } from '../../src/cli/format.js';
import { buildProgram, commandName } from '../../src/cli/index.js';
import { BIN, freePort, REPO_ROOT } from '../support/cli.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

let configDir: string;
let home: string;
beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'router-offline-'));
});
beforeEach(() => {
  configDir = isolateCliConfig();
  return () => rmSync(configDir, { recursive: true, force: true });
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('help', () => {
  it('every command prints --help with examples (exit 0)', async () => {
    const { program } = await buildProgram();
    const leaves: string[][] = [];
    const walk = (cmd: typeof program, path: string[]) => {
      const subs = cmd.commands.filter((c) => c.name() !== 'help');
      if (subs.length === 0 || path.length === 1) if (path.length) leaves.push(path);
      for (const c of subs) walk(c, [...path, c.name()]);
    };
    walk(program, []);
    // The groups themselves (keys, providers, ...) list their subcommands; the leaves carry examples.
    const runnable = leaves.filter((p) => {
      let c = program;
      for (const n of p) c = c.commands.find((x) => x.name() === n)!;
      return c.commands.length === 0 || (c as unknown as { _actionHandler: unknown })._actionHandler;
    });
    expect(runnable.length).toBeGreaterThan(40);
    for (const path of runnable) {
      const r = await run([...path, '--help']);
      expect(r.exitCode, path.join(' ')).toBe(0);
      expect(r.stdout, `router ${path.join(' ')} --help`).toMatch(/\nExamples?:\n  \S/);
    }
  });

  it('the top-level help lists every group and the exit codes', async () => {
    const r = await run(['--help']);
    for (const g of ['start', 'stop', 'restart', 'status', 'dashboard', 'inspect', 'keys', 'providers', 'combos', 'models', 'settings', 'usage', 'logs', 'webhooks', 'batches', 'memory', 'password', 'token', 'config-tool', 'config', 'completion']) {
      expect(r.stdout).toMatch(new RegExp(`\\n  ${g}( |\\n)`));
    }
    expect(r.stdout).toContain('exit codes: 0 ok, 1 error, 2 usage');
  });

  it('the command name is found past global options and their values', () => {
    expect(commandName(['--home', 'status', 'keys', 'list'])).toBe('keys');
    expect(commandName(['--debug', '--port', '1', 'logs', '-f'])).toBe('logs');
    expect(commandName(['--help'])).toBeUndefined();
  });
});

describe('completion', () => {
  const script = async (shell: string) => {
    const r = await run(['completion', shell]);
    expect(r.exitCode, show(r)).toBe(0);
    const file = join(configDir, `router.${shell}`);
    writeFileSync(file, r.stdout);
    return file;
  };

  it('bash: subcommands, nested groups, options and argument choices', async () => {
    const file = await script('bash');
    const complete = (words: string[]) => {
      const r = spawnSync('bash', ['-c', `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _router; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    };
    expect(complete(['router', ''])).toEqual(expect.arrayContaining(['start', 'providers', 'dashboard', 'config-tool', 'completion']));
    expect(complete(['router', 'providers', 'nodes', ''])).toEqual(['add', 'list', 'rm', '--help']);
    expect(complete(['router', '--home', '/x', 'keys', ''])).toEqual(['add', 'list', 'rename', 'rm', 'disable', 'enable', 'limits', 'memory', '--help']);
    expect(complete(['router', 'logs', '--st'])).toEqual(['--status']);
    expect(complete(['router', 'completion', ''])).toEqual(['bash', 'zsh', 'fish', '--help']);
    expect(complete(['router', 'config-tool', 'c'])).toEqual(['claude-code', 'codex', 'cline', 'copilot-cli']);
  });

  it.skipIf(spawnSync('zsh', ['--version']).status !== 0)('zsh: parses, and offers subcommands with descriptions', async () => {
    const file = await script('zsh');
    expect(spawnSync('zsh', ['-n', file]).status).toBe(0);
    const r = spawnSync(
      'zsh',
      ['-c', `source ${file}; _describe() { print -l -- "\${(@P)2}" }; compadd() { shift; print -l -- "$@" }; words=(router providers nodes ''); CURRENT=4; _router`],
      { encoding: 'utf8' },
    );
    expect(r.stdout.trim().split('\n')).toEqual(['add:add a custom endpoint', 'list:list provider nodes', 'rm:remove a provider node']);
  });

  it.skipIf(spawnSync('fish', ['--version']).status !== 0)('fish: parses, and completes nested commands', async () => {
    const file = await script('fish');
    expect(spawnSync('fish', ['-n', file]).status).toBe(0);
    const r = spawnSync('fish', ['-c', `source ${file}; complete -C 'router providers nodes '`], { encoding: 'utf8' });
    expect(r.stdout.trim().split('\n').map((l) => l.split('\t')[0])).toEqual(['add', 'list', 'rm']);
  });

  it('the tree is the program: every command appears exactly once', async () => {
    const tree = commandTree((await buildProgram()).program);
    const paths: string[] = [];
    const walk = (n: typeof tree) => {
      paths.push(n.path);
      n.subcommands.forEach(walk);
    };
    walk(tree);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).toContain('router providers nodes add');
  });
});

describe('router config (the CLI preferences)', () => {
  it('set/get/unset/path; values are validated; the file is plain JSON', async () => {
    expect((await run(['config', 'path'])).stdout).toBe(`${join(configDir, 'cli.json')}\n`);
    expect((await run(['config', 'set', 'port', '20200'])).stdout).toBe('port = 20200\n');
    const human = (await run(['config'])).stdout;
    expect(human).toMatch(/^port = 20200\s+# default daemon port/m);
    expect(human).toMatch(/^home = \(unset\)/m);
    expect((await run(['config', 'set', 'output', 'json'])).stdout).toBe('output = "json"\n');
    expect((await run(['config', 'get', 'port'])).stdout).toBe('20200\n');
    expect(JSON.parse(readFileSync(join(configDir, 'cli.json'), 'utf8'))).toEqual({ port: 20200, output: 'json' });
    // With the output preference at json, `router config` itself prints JSON.
    expect(json(await run(['config']))).toEqual({ port: 20200, output: 'json' });
    for (const bad of [['port', 'http'], ['port', '70000'], ['output', 'yaml'], ['colour', 'x']]) {
      const r = await run(['config', 'set', ...bad]);
      expect(r.exitCode, bad.join(' ')).toBe(2);
    }
    expect((await run(['config', 'unset', 'port'])).stdout).toBe('port unset\n');
    expect((await run(['config', 'get', 'port'])).stdout).toBe('\n');
  });

  it('port and home preferences are defaults below flags and env; output json turns data commands to JSON', async () => {
    const port = await freePort();
    await run(['config', 'set', 'port', String(port)]);
    const r = await run(['keys', 'list', '--home', home]);
    expect(r.stderr).toContain(`not running at http://127.0.0.1:${port};`);
    const prev = process.env.ROUTER_PORT;
    process.env.ROUTER_PORT = String(port + 1);
    try {
      expect((await run(['keys', 'list', '--home', home])).stderr).toContain(`:${port + 1};`);
    } finally {
      if (prev === undefined) delete process.env.ROUTER_PORT;
      else process.env.ROUTER_PORT = prev;
    }
    expect((await run(['keys', 'list', '--home', home, '--port', String(port + 2)])).stderr).toContain(`:${port + 2};`);

    await run(['config', 'set', 'home', home]);
    expect(json(await run(['token', '--json']))).toMatchObject({ saltFile: join(home, 'cli-token.salt') });
    await run(['config', 'set', 'output', 'json']);
    const listed = json<any[]>(await run(['config-tool', '--config-home', home]));
    expect(listed.map((t) => t.id)).toEqual(['claude-code', 'codex', 'gemini-cli', 'opencode', 'cline', 'qwen-code', 'copilot-cli']);
  });

  it('a broken config file is ignored, not fatal', async () => {
    writeFileSync(join(configDir, 'cli.json'), '{not json');
    resetCliConfigCache();
    const r = await run(['status', '--home', home]);
    expect([r.exitCode, r.stdout]).toEqual([1, 'router is not running\n']);
  });
});

describe('start-up cost: plain commands never load the TUI stack', () => {
  const DIST = join(REPO_ROOT, 'dist', 'cli');
  /** Bare packages reachable through static imports (dynamic import() is not followed). */
  function staticPackages(entry: string): Set<string> {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const src = readFileSync(file, 'utf8');
      for (const m of src.matchAll(/^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]/gm)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
        else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    };
    visit(entry);
    return packages;
  }

  it('the CLI entry imports commander only; the status command no package at all', () => {
    expect([...staticPackages(join(DIST, 'index.js'))]).toEqual(['commander']);
    expect([...staticPackages(join(DIST, 'commands', 'status.js'))]).toEqual([]);
  });

  it('no command module imports ink, react, undici, execa or conf statically', () => {
    for (const f of ['start', 'stop', 'restart', 'status', 'tui', 'keys', 'providers', 'combos', 'models', 'settings', 'usage', 'logs', 'webhooks', 'batches', 'memory', 'password', 'token', 'config-tool', 'config', 'completion', 'live-commands']) {
      const pkgs = staticPackages(join(DIST, 'commands', `${f}.js`));
      for (const heavy of ['ink', 'react', 'undici', 'execa', 'conf']) expect(pkgs.has(heavy), `${f} imports ${heavy}`).toBe(false);
    }
    // The TUI modules are the ones that do.
    expect(staticPackages(join(DIST, 'tui', 'run.js')).has('ink')).toBe(true);
  });

  it('`router --version` runs in a fresh process (the launcher path works)', () => {
    const r = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', env: { ...process.env, ROUTER_CLI_CONFIG_DIR: configDir } });
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(existsSync(join(REPO_ROOT, 'bench', 'cli-startup.mjs'))).toBe(true);
  });
});

describe('errors from the daemon, as a person reads them', () => {
  it('403 over a non-loopback address explains the loopback rule', () => {
    const e = replyError(403, JSON.stringify({ error: { message: 'The CLI token is accepted from loopback callers only.', type: 'permission_error', code: 'forbidden' } }));
    expect(e.message).toBe('forbidden: The CLI token is accepted from loopback callers only.');
    expect(e.detail).toMatch(/run the CLI on the daemon's machine/);
  });
  it('a route this daemon lacks points at a version difference', () => {
    const e = replyError(404, JSON.stringify({ error: { message: 'Not found.', type: 'not_found_error', code: 'not_found' } }), 'GET', '/api/memory?q=x');
    expect(e.message).toMatch(/^the daemon has no route GET \/api\/memory; is it older than this CLI/);
  });
  it('a validation error names the field in words, one line, no internal suffix; it exits 2', () => {
    const body = (message: string, param?: string) => JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'bad_request', ...(param ? { param } : {}) } });
    const e = replyError(400, body('must be a URL', 'baseUrl'));
    expect([e.message, e.exitCode]).toEqual(['baseUrl: must be a URL', 2]);
    expect(replyError(400, body("Unknown model 'x': use <provider>/<model>.", 'models.0')).message).toBe("models[0]: Unknown model 'x': use <provider>/<model>.");
    expect(replyError(400, body("Invalid field 'models.0.weight': too big", 'models.0.weight')).message).toBe('models[0].weight: too big');
    expect(replyError(400, body('Invalid field \'body\': Unrecognized key: "x"', 'body')).message).toBe('Unrecognized key: "x"');
    expect(replyError(404, JSON.stringify({ error: { message: 'API key not found.', type: 'not_found_error', code: 'not_found' } })).message).toBe('API key not found.');
    // Only a 500 is the daemon failing; a 502 reports an upstream (issue 27 item 12).
    expect(replyError(502, 'Bad Gateway').message).toBe('Bad Gateway');
    expect(replyError(500, 'boom').message).toBe('the daemon failed: boom');
    const upstream = JSON.stringify({ error: { message: "upstream openai (connection 'work') rejected its credential: [401]: bad key", type: 'upstream_error', code: 'upstream_auth_failed' } });
    expect(replyError(502, upstream).message).toBe("upstream openai (connection 'work') rejected its credential: [401]: bad key");
    // Fixes name the command, not the HTTP route.
    const noConn = JSON.stringify({ error: { message: "No active connection for provider 'openai'; add one with POST /api/providers.", type: 'invalid_request_error', code: 'no_active_connection' } });
    expect(replyError(409, noConn).message).toBe("No active connection for provider 'openai'; add one with `router providers add <provider>`.");
  });
  it('periods resolve to UTC calendar ranges or spans back from now', () => {
    const now = Date.parse('2025-06-15T10:30:00Z');
    expect(periodRange('today', now)).toEqual({ from: Date.parse('2025-06-15T00:00:00Z') });
    expect(periodRange('month', now)).toEqual({ from: Date.parse('2025-06-01T00:00:00Z') });
    expect(periodRange('7d', now)).toEqual({ from: now - 7 * 86_400_000 });
    expect(periodRange('all', now)).toEqual({});
  });
});

describe('human output (snapshots with fixed data)', () => {
  const conn = (over: object) => ({
    id: '6f1c2a4e-0000-4000-8000-000000000001',
    provider: 'openai',
    name: 'main',
    authKind: 'api-key',
    apiKey: 'sk-p...wxyz',
    accessToken: null,
    refreshToken: null,
    cookie: null,
    expiresAt: null,
    priority: 100,
    providerSpecificData: {},
    isActive: true,
    testStatus: 'ok',
    lastError: null,
    lastTestedAt: null,
    createdAt: '2025-06-01T12:00:00.000Z',
    updatedAt: '2025-06-01T12:00:00.000Z',
    ...over,
  });
  const entry = (over: object) => ({
    id: 1,
    timestamp: '2025-06-01T12:00:05.000Z',
    traceId: 't1',
    apiKeyId: 'k1',
    endpoint: '/v1/chat/completions',
    clientFormat: 'openai-chat',
    provider: 'openai',
    model: 'gpt-4o-mini',
    requestedModel: 'fast',
    connectionId: 'c1',
    combo: 'fast',
    status: 200,
    latencyMs: 812,
    upstreamMs: 790,
    tokensIn: 15234,
    tokensOut: 512,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.002591,
    streamed: true,
    estimated: false,
    finishReason: 'stop',
    error: null,
    userAgent: null,
    forwardedFor: null,
    ...over,
  });
  const totals = (requests: number, errors: number, input: number, output: number, costUsd: number, avg: number | null, unpricedRequests = 0) => ({
    requests,
    errors,
    tokens: { input, output, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0, audioInput: 0, audioOutput: 0, imageInput: 0, imageOutput: 0, total: input + output },
    costUsd,
    unpricedRequests,
    avgLatencyMs: avg,
  });

  it('providers list, catalog and nodes', () => {
    const list = [conn({}), conn({ id: '6f1c2a4e-0000-4000-8000-000000000002', provider: 'anthropic', name: 'work', apiKey: 'sk-a...1234', isActive: false, testStatus: 'expired', priority: 5 })];
    const resilience = {
      breakers: [{ provider: 'anthropic', providerId: 'anthropic', state: 'open' as const, consecutiveFailures: 5, openUntil: '2025-06-01T12:01:00.000Z' }],
      cooldowns: [{ connectionId: '6f1c2a4e-0000-4000-8000-000000000001', model: 'gpt-4.1', until: 0, reason: 'rate_limit', remainingSeconds: 30 }],
      demoted: [],
      settings: { failureThreshold: 5, cooldownMs: 30_000, halfOpenProbes: 1 },
    };
    expect(formatConnections(list as any, resilience)).toMatchSnapshot();
    expect(formatConnections([])).toMatchSnapshot();
    expect(
      formatCatalog([
        { id: 'openai', name: 'OpenAI', kind: 'cloud', format: 'openai-chat', authKinds: ['api-key'], baseUrl: 'https://api.openai.com/v1', aliases: [], supportsTools: true },
        { id: 'ollama', name: 'Ollama', kind: 'local', format: 'openai-chat', authKinds: ['none'], baseUrl: 'http://127.0.0.1:11434/v1', aliases: [], supportsTools: true },
      ]),
    ).toMatchSnapshot();
    expect(
      formatNodes([{ id: 'n1', name: 'GPU box', prefix: 'vllm', type: 'openai-compatible', baseUrl: 'http://gpu:8000/v1', apiType: 'chat', completions: true, customHeaders: {}, createdAt: '2025-06-01T12:00:00.000Z', updatedAt: '' }]),
    ).toMatchSnapshot();
  });

  it('models, usage, logs and webhooks', () => {
    expect(
      formatModels([
        { id: 'fast', provider: 'combo', contextLength: null, source: 'combo' },
        { id: 'openai/gpt-4.1', provider: 'openai', contextLength: 1047576, source: 'static' },
        { id: 'anthropic/claude-sonnet-4-5', provider: 'anthropic', contextLength: 200000, source: 'synced' },
      ]),
    ).toMatchSnapshot();
    expect(
      formatUsage({
        summary: { from: '2025-06-01T00:00:00.000Z', to: '2025-06-02T00:00:00.000Z', traces: 118, streamed: 90, estimated: 3, ...totals(120, 4, 1_234_567, 89_012, 12.3456, 812.5, 2) },
        breakdown: { by: 'provider', rows: [{ key: 'anthropic', ...totals(70, 1, 1_000_000, 50_000, 11.5, 900) }, { key: 'openai', ...totals(50, 3, 234_567, 39_012, 0.8456, 700.25, 2) }] },
      }),
    ).toMatchSnapshot();
    expect(formatUsage({ summary: { from: '2025-06-01T00:00:00.000Z', to: '2025-06-02T00:00:00.000Z', traces: 0, streamed: 0, estimated: 0, ...totals(0, 0, 0, 0, 0, null) }, breakdown: { by: 'model', rows: [] } })).toMatchSnapshot();
    const logs = [entry({ id: 2, timestamp: '2025-06-01T12:00:09.000Z', status: 429, model: 'gpt-4.1', requestedModel: 'openai/gpt-4.1', combo: null, tokensIn: 0, tokensOut: 0, costUsd: 0, error: 'rate limited' }), entry({})];
    expect(formatLogs(logs as any)).toMatchSnapshot();
    expect(logs.map((e) => formatLogLine(e as any)).join('\n')).toMatchSnapshot();
    expect(
      formatWebhooks([
        { id: 'w1', url: 'https://hooks.example.com/router', kind: 'custom', events: ['request.failed', 'provider.error'], enabled: 1, description: null, created_at: '', last_triggered_at: '2025-06-01T12:00:00.000Z', last_status: 200, failure_count: 0, secret: 'whsec_abcd...' },
        { id: 'w2', url: '-1001234567890', kind: 'telegram', events: ['*'], enabled: 0, description: null, created_at: '', last_triggered_at: null, last_status: null, failure_count: 10, secret: 'whsec_efgh...' },
      ]),
    ).toMatchSnapshot();
  });

  it('numbers and sparklines', () => {
    expect([tokens(950), tokens(12_345), tokens(4_560_000), usd(0), usd(0.00042), usd(1234.5)]).toEqual(['950', '12.3k', '4.56M', '$0', '$0.0004', '$1,234.50']);
    expect(sparkline([0, 1, 2, 4, 8], 5)).toBe(' ▁▂▄█');
    expect(sparkline([3], 4)).toBe('   █');
  });
});
