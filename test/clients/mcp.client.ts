/**
 * Claude Code as an MCP client of router: in a fresh HOME, the `claude mcp add --transport http` line that
 * `router mcp` prints registers router's server; `claude mcp list` connects to it; a `claude -p` session
 * lists router's tools over Streamable HTTP (`tools/list`) and offers them to the model (the request router
 * forwards to the mock upstream names each as `mcp__router__<tool>`). Claude Code first probes with
 * `server/discover` (a newer protocol revision); router answers 400 and the client falls back to initialize.
 */
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { PLAIN_PROMPT } from './agent-mock.js';
import { baseEnv, describeRun, newWorkspace, runAgent } from './agent.js';
import { CLIENTS, ensureClient } from './install.js';
import { ROUTES, startWorld, type World } from './world.js';

const TOOLS = ['list_models', 'list_combos', 'chat', 'usage_summary', 'provider_health', 'recent_errors', 'memory_search', 'memory_add', 'list_webhooks', 'webhook_test'];

describe(`claude-code ${CLIENTS['claude-code'].version} as an MCP client`, () => {
  let world: World;
  let manageKey: string;
  beforeAll(async () => {
    world = await startWorld();
    manageKey = (JSON.parse(await world.cli(['keys', 'add', '--name', 'mcp', '--scope', 'manage', '--json'])) as { key: string }).key;
  });
  afterAll(async () => {
    await world?.stop();
  });

  it('claude mcp add (the line router mcp prints), claude mcp list, and a session that lists router tools', async () => {
    const ws = newWorkspace('claude-code');
    onTestFinished(() => rmSync(ws.root, { recursive: true, force: true }));
    const env = {
      ...baseEnv(ws.home),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      ROUTER_MCP_KEY: manageKey,
    };
    // The snippet, pointed at the recording pass-through (same paths as the daemon), run by a shell as a user would.
    const printed = JSON.parse(await world.cli(['mcp', '--client', 'claude', '--json'])) as { stream: string; clients: Array<{ text: string }> };
    const line = printed.clients[0]!.text.replace(printed.stream, `${world.url}/api/mcp/stream`);
    expect(line).toMatch(/^claude mcp add --transport http /);
    const { command } = await ensureClient(CLIENTS['claude-code']);
    const added = await execa('sh', ['-c', line.replace(/^claude /, '"$CLAUDE_BIN" ')], { env: { ...env, CLAUDE_BIN: command }, extendEnv: false, reject: false, cwd: ws.workdir });
    expect(added.exitCode, `${added.stdout}\n${added.stderr}`).toBe(0);

    const list = await runAgent(world, 'claude-code', ws, ['mcp', 'list'], env);
    expect(list.exitCode, describeRun(list)).toBe(0);
    expect(list.stdout, describeRun(list)).toMatch(/router: http:\/\/127\.0\.0\.1:\d+\/api\/mcp\/stream \(HTTP\) - .*Connected/);
    expect(list.sent.some((r) => r.url === '/api/mcp/stream' && r.body.includes('"method":"initialize"') && r.status === 200)).toBe(true);

    // A session: Claude Code's model requests go through router as usual (settings from config-tool).
    await world.cli(['config-tool', 'claude-code', '--model', ROUTES.anthropic, '--key', world.key, '--url', world.url, '--config-home', ws.home, '--yes']);
    const run = await runAgent(world, 'claude-code', ws, ['-p', PLAIN_PROMPT, '--output-format', 'text'], env);
    const why = describeRun(run);
    expect(run.exitCode, why).toBe(0);
    expect(run.sent.some((r) => r.url === '/api/mcp/stream' && r.body.includes('"method":"tools/list"') && r.status === 200), why).toBe(true);
    const model = run.upstream.find((u) => u.endpoint === 'anthropic.messages' && u.body.includes(PLAIN_PROMPT));
    expect(model, why).toBeDefined();
    // Claude Code defers MCP tools behind its ToolSearch tool: the request names each of them (`mcp__<server>__<tool>`).
    for (const t of TOOLS) expect(model!.body.includes(`mcp__router__${t}`), `${t}\n${why}`).toBe(true);
  });
});
