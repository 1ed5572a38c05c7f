import type { Command } from 'commander';
import { CliError } from '../io.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** Coding agents `router mcp` writes a configuration for. */
const CLIENTS = ['claude', 'codex', 'cursor', 'vscode'] as const;
type McpClient = (typeof CLIENTS)[number];

/** The environment variable the snippets read the manage-scope key from (never written into a file). */
export const KEY_ENV = 'ROUTER_MCP_KEY';

/** Router's MCP endpoints on a base URL (a wildcard listen address is reached over loopback). */
export function mcpUrls(base: string): { stream: string; sse: string } {
  const u = new URL(base);
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = '127.0.0.1';
  const root = u.origin;
  return { stream: `${root}/api/mcp/stream`, sse: `${root}/api/mcp/sse` };
}

/** One client's configuration: where it goes and what to put there. */
export function snippet(client: McpClient, url: string, name = 'router'): { title: string; where: string; text: string } {
  switch (client) {
    case 'claude':
      return {
        title: 'Claude Code',
        where: 'run once (user scope: every project)',
        text: `claude mcp add --transport http --scope user ${name} ${url} --header "Authorization: Bearer $${KEY_ENV}"`,
      };
    case 'codex':
      return {
        title: 'Codex',
        where: '~/.codex/config.toml',
        text: `[mcp_servers.${name}]\nurl = "${url}"\nbearer_token_env_var = "${KEY_ENV}"`,
      };
    case 'cursor':
      return {
        title: 'Cursor',
        where: '~/.cursor/mcp.json (or .cursor/mcp.json in a project)',
        text: JSON.stringify({ mcpServers: { [name]: { url, headers: { Authorization: `Bearer \${env:${KEY_ENV}}` } } } }, null, 2),
      };
    case 'vscode':
      return {
        title: 'VS Code',
        where: '.vscode/mcp.json (or the user mcp.json: "MCP: Open User Configuration")',
        text: JSON.stringify(
          {
            inputs: [{ type: 'promptString', id: 'router-mcp-key', description: 'router manage-scope API key', password: true }],
            // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own input-variable syntax, literally
            servers: { [name]: { type: 'http', url, headers: { Authorization: 'Bearer ${input:router-mcp-key}' } } },
          },
          null,
          2,
        ),
      };
  }
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('mcp')), [
    'router mcp                       # snippets for Claude Code, Codex, Cursor and VS Code',
    'router mcp --client claude       # only the `claude mcp add` line',
    `router keys add --name mcp --scope manage   # the key the snippets read from $${KEY_ENV}`,
  ])
    .description("print the configuration that connects a coding agent to router's MCP server")
    .option('--client <name>', `only this client: ${CLIENTS.join(', ')}`)
    .option('--name <name>', 'the server name in the client', 'router')
    .option('--json', 'print {stream, sse, keyEnv, clients: [{client, title, where, text}]}')
    .action(
      ctx.run(async (opts) => {
        if (opts.client !== undefined && !(CLIENTS as readonly string[]).includes(opts.client)) {
          throw new CliError(`unknown client '${opts.client}': expected one of ${CLIENTS.join(', ')}`);
        }
        if (!/^[A-Za-z0-9_-]{1,64}$/.test(opts.name)) throw new CliError('--name: letters, digits, _ and - only (at most 64)');
        const urls = mcpUrls(resolveTarget(opts).url);
        const chosen = opts.client ? [opts.client as McpClient] : [...CLIENTS];
        const clients = chosen.map((c) => ({ client: c, ...snippet(c, urls.stream, opts.name) }));
        ctx.emit(opts, { ...urls, keyEnv: KEY_ENV, clients }, () =>
          [
            `router's MCP server: ${urls.stream} (Streamable HTTP); older clients: ${urls.sse} (SSE).`,
            `It needs a manage-scope API key: \`router keys add --name mcp --scope manage\`, then export ${KEY_ENV}=<key>.`,
            ...clients.map((c) => `\n# ${c.title}: ${c.where}\n${c.text}`),
          ].join('\n'),
        );
        return 0;
      }),
    );
}
