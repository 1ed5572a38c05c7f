/** `router mcp`: the configuration snippets for Claude Code, Codex, Cursor and VS Code (no daemon needed). */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runRouter, tempHome } from '../support/cli.js';

const home = tempHome('router-mcp-cli-');
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('router mcp', () => {
  it('prints every client snippet, pointing at the Streamable HTTP endpoint of the configured port', async () => {
    const r = await runRouter(['mcp', '--home', home, '--port', '23456', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const url = 'http://127.0.0.1:23456/api/mcp/stream';
    expect(out).toMatchObject({ stream: url, sse: 'http://127.0.0.1:23456/api/mcp/sse', keyEnv: 'ROUTER_MCP_KEY' });
    const by = Object.fromEntries(out.clients.map((c: any) => [c.client, c.text]));
    expect(Object.keys(by)).toEqual(['claude', 'codex', 'cursor', 'vscode']);
    expect(by.claude).toBe(`claude mcp add --transport http --scope user router ${url} --header "Authorization: Bearer $ROUTER_MCP_KEY"`);
    expect(by.codex).toBe(`[mcp_servers.router]\nurl = "${url}"\nbearer_token_env_var = "ROUTER_MCP_KEY"`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Cursor's and VS Code's own variable syntax, literally
    expect(JSON.parse(by.cursor)).toEqual({ mcpServers: { router: { url, headers: { Authorization: 'Bearer ${env:ROUTER_MCP_KEY}' } } } });
    const vscode = JSON.parse(by.vscode);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Cursor's and VS Code's own variable syntax, literally
    expect(vscode.servers.router).toEqual({ type: 'http', url, headers: { Authorization: 'Bearer ${input:router-mcp-key}' } });
    expect(vscode.inputs[0]).toMatchObject({ id: 'router-mcp-key', password: true });
  });

  it('--client picks one; a wrong client or name is a usage error', async () => {
    const r = await runRouter(['mcp', '--home', home, '--client', 'codex', '--name', 'my-router']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('[mcp_servers.my-router]');
    expect(r.stdout).not.toContain('claude mcp add');
    const bad = await runRouter(['mcp', '--home', home, '--client', 'emacs']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown client 'emacs'/);
    expect((await runRouter(['mcp', '--home', home, '--name', 'a b'])).exitCode).not.toBe(0);
  });
});
