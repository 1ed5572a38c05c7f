/**
 * `router config-tool` against temp home folders holding realistic config files of each tool: what is
 * not router's stays as it was, a backup is made first, the diff is shown (key masked) and confirmed,
 * and undo restores every file byte for byte.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/cli/config-tool/diff.js';
import { tomlSetRootKey, tomlSetTable } from '../../src/shared/agent-tools/edit.js';
import { readToolSettings, toolById } from '../../src/shared/agent-tools/tools.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

const KEY = 'rk_live_0123456789abcdefghijklmnop';
const URL = 'http://127.0.0.1:20128';

const CLAUDE_SETTINGS = `{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {
        "allow": [
            "Bash(npm run lint)",
            "Bash(npm run test:*)",
            "Read(~/.zshrc)"
        ],
        "deny": [
            "Bash(curl:*)",
            "Read(./.env)",
            "Read(./secrets/**)"
        ]
    },
    "env": {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        "BASH_DEFAULT_TIMEOUT_MS": "120000"
    },
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{ "type": "command", "command": "npx prettier --write \\"$CLAUDE_FILE_PATHS\\"" }]
            }
        ]
    },
    "model": "opus",
    "includeCoAuthoredBy": false,
    "statusLine": { "type": "command", "command": "~/.claude/statusline.sh" }
}
`;

const CODEX_TOML = `# Codex configuration (hand-written)
model = "gpt-5-codex"
model_reasoning_effort = "high"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[sandbox_workspace_write]
network_access = false

# Docs lookups
[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[projects."/home/dev/work/api"]
trust_level = "trusted"

[tui]
notifications = true
`;

const OPENCODE_JSON = `{
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight",
  "autoupdate": false,
  "model": "anthropic/claude-sonnet-4-5",
  "provider": {
    "anthropic": {
      "options": { "timeout": 600000 }
    }
  },
  "mcp": {
    "github": { "type": "remote", "url": "https://api.githubcopilot.com/mcp/", "enabled": true }
  },
  "instructions": ["CONTRIBUTING.md", "docs/guidelines.md"]
}
`;

const CLINE_STATE = `{
\t"actModeApiProvider": "anthropic",
\t"planModeApiProvider": "anthropic",
\t"apiModelId": "claude-sonnet-4-5-20250929",
\t"autoApprovalSettings": {
\t\t"enabled": true,
\t\t"actions": { "readFiles": true, "editFiles": false, "executeSafeCommands": true },
\t\t"maxRequests": 20
\t},
\t"telemetrySetting": "disabled",
\t"mode": "act"
}
`;
const CLINE_SECRETS = `{
  "apiKey": "sk-ant-api03-existing-user-key",
  "openRouterApiKey": "sk-or-v1-existing"
}
`;

const CLINE_PROVIDERS = `{
  "version": 1,
  "lastUsedProvider": "anthropic",
  "modes": {},
  "providers": {
    "anthropic": {
      "settings": { "provider": "anthropic", "apiKey": "sk-ant-mine", "model": "claude-sonnet-4-5" },
      "updatedAt": "2026-01-01T00:00:00.000Z",
      "tokenSource": "manual"
    }
  }
}
`;
const QWEN_SETTINGS = `{
  "$version": 4,
  "general": { "enableAutoUpdate": false },
  "modelProviders": {
    "openai": [{ "id": "qwen3-coder-plus", "baseUrl": "https://dashscope.aliyuncs.com/compatible-mode/v1", "envKey": "DASHSCOPE_API_KEY" }]
  },
  "env": { "DASHSCOPE_API_KEY": "sk-dashscope-mine" },
  "security": { "auth": { "selectedType": "openai" } },
  "model": { "name": "qwen3-coder-plus" }
}
`;
const COPILOT_SETTINGS = `{
  "banner": "never",
  "model": "claude-sonnet-4.6"
}
`;

let stateHome: string;
let configHome: string;
let cliConfig: string;

beforeAll(() => {
  cliConfig = isolateCliConfig();
});
afterAll(() => rmSync(cliConfig, { recursive: true, force: true }));

beforeEach(() => {
  stateHome = mkdtempSync(join(tmpdir(), 'router-state-'));
  configHome = mkdtempSync(join(tmpdir(), 'router-tools-'));
  return () => {
    rmSync(stateHome, { recursive: true, force: true });
    rmSync(configHome, { recursive: true, force: true });
  };
});

function put(rel: string, content: string, mode = 0o644): string {
  const file = join(configHome, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

const tool = (...args: string[]) => run(['config-tool', ...args, '--config-home', configHome, '--home', stateHome, '--url', URL]);
async function ok(...args: string[]) {
  const r = await tool(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

/** The single backup entry folder of a tool. */
function backupDir(id: string): string {
  const root = join(stateHome, 'config-tool', id);
  const entries = readdirSync(root);
  expect(entries).toHaveLength(1);
  return join(root, entries[0]!);
}

describe('claude-code', () => {
  it('sets the env keys, keeps everything else (4-space indent too), backs up, undo is byte-identical', async () => {
    const file = put('.claude/settings.json', CLAUDE_SETTINGS);
    const r = json(await ok('claude-code', '--key', KEY, '--model', 'fast', '--small-model', 'groq/llama-3.1-8b-instant', '--yes', '--json'));
    expect(r).toMatchObject({ tool: 'claude-code', files: [file], keyId: null, model: 'fast', baseUrl: URL });
    const text = readFileSync(file, 'utf8');
    const after = JSON.parse(text);
    const before = JSON.parse(CLAUDE_SETTINGS);
    expect(after.env).toEqual({
      ...before.env,
      ANTHROPIC_BASE_URL: URL,
      ANTHROPIC_AUTH_TOKEN: KEY,
      ANTHROPIC_MODEL: 'fast',
      ANTHROPIC_DEFAULT_HAIKU_MODEL: 'groq/llama-3.1-8b-instant',
    });
    expect({ ...after, env: before.env }).toEqual(before);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(text).toMatch(/^\{\n {4}"\$schema"/);
    expect(text.endsWith('}\n')).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o644);

    const dir = backupDir('claude-code');
    expect(readFileSync(join(dir, 'file-0'), 'utf8')).toBe(CLAUDE_SETTINGS);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))).toMatchObject({ tool: 'claude-code', configHome, files: [{ path: file, existed: true }] });

    await ok('claude-code', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(CLAUDE_SETTINGS))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readdirSync(join(stateHome, 'config-tool', 'claude-code'))).toEqual([]);
  });

  it('shows the diff with the key masked and asks; "n" writes nothing; without a terminal --yes is required', async () => {
    const file = put('.claude/settings.json', CLAUDE_SETTINGS);
    const no = await run(['config-tool', 'claude-code', '--key', KEY, '--config-home', configHome, '--home', stateHome, '--url', URL], { interactive: true, answers: ['n'] });
    expect(no.exitCode).toBe(1);
    // an absolute path keeps one slash after a/ and b/
    expect(no.stdout).toContain(`--- a/${file.replace(/^\//, '')}`);
    expect(no.stdout).toContain(`+++ b/${file.replace(/^\//, '')}`);
    expect(no.stdout).not.toMatch(/^(---|\+\+\+) [ab]\/\//m);
    expect(no.stdout).toMatch(/^\+ {8}"ANTHROPIC_AUTH_TOKEN": "rk_liv\.\.\.mnop",?$/m);
    expect(no.stdout).not.toContain(KEY);
    expect(no.stdout).toMatch(/Write these changes to Claude Code's settings\? \[y\/N\] nothing written/);
    expect(readFileSync(file, 'utf8')).toBe(CLAUDE_SETTINGS);
    expect(existsSync(join(stateHome, 'config-tool'))).toBe(false);

    const noTty = await tool('claude-code', '--key', KEY);
    expect(noTty.exitCode).toBe(2);
    expect(noTty.stderr).toMatch(/run again with --yes/);
    expect(readFileSync(file, 'utf8')).toBe(CLAUDE_SETTINGS);

    const yes = await run(['config-tool', 'claude-code', '--key', KEY, '--config-home', configHome, '--home', stateHome, '--url', URL], { interactive: true, answers: ['y'] });
    expect(yes.exitCode, show(yes)).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).env.ANTHROPIC_AUTH_TOKEN).toBe(KEY);
  });

  it('creates the file (0600) when there is none; undo removes it', async () => {
    const file = join(configHome, '.claude', 'settings.json');
    await ok('claude-code', '--key', KEY, '--yes');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      env: { ANTHROPIC_BASE_URL: URL, ANTHROPIC_AUTH_TOKEN: KEY, ANTHROPIC_MODEL: 'anthropic/claude-sonnet-4-5', ANTHROPIC_DEFAULT_HAIKU_MODEL: 'anthropic/claude-sonnet-4-5' },
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const undo = await ok('claude-code', '--undo', '--yes');
    expect(undo.stdout).toContain(`removed ${file} (router had created it)`);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a file with comments (not plain JSON) and leaves it alone', async () => {
    const jsonc = '{\n  // my settings\n  "model": "opus"\n}\n';
    const file = put('.claude/settings.json', jsonc);
    const r = await tool('claude-code', '--key', KEY, '--yes');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/is not plain JSON .*router will not rewrite it/);
    expect(readFileSync(file, 'utf8')).toBe(jsonc);
  });

  it('undo refuses when the file changed after router wrote it; --force restores anyway', async () => {
    const file = put('.claude/settings.json', CLAUDE_SETTINGS);
    await ok('claude-code', '--key', KEY, '--yes');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"opus"', '"sonnet"'));
    const r = await tool('claude-code', '--undo', '--yes');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/changed after router wrote it; undo would discard those edits/);
    await ok('claude-code', '--undo', '--yes', '--force');
    expect(readFileSync(file).equals(Buffer.from(CLAUDE_SETTINGS))).toBe(true);
  });

  it('runs stack: two runs, two undos, back to the original bytes; nothing more to undo', async () => {
    const file = put('.claude/settings.json', CLAUDE_SETTINGS);
    await ok('claude-code', '--key', KEY, '--yes');
    const first = readFileSync(file, 'utf8');
    await ok('claude-code', '--key', KEY, '--model', 'other', '--yes');
    await ok('claude-code', '--undo', '--yes');
    expect(readFileSync(file, 'utf8')).toBe(first);
    await ok('claude-code', '--undo', '--yes');
    expect(readFileSync(file, 'utf8')).toBe(CLAUDE_SETTINGS);
    const none = await tool('claude-code', '--undo', '--yes');
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/nothing to undo/);
  });

  it('--dry-run shows the diff and writes nothing', async () => {
    const file = put('.claude/settings.json', CLAUDE_SETTINGS);
    const r = await ok('claude-code', '--key', KEY, '--dry-run');
    expect(r.stdout).toMatch(/@@ -\d+,\d+ \+\d+,\d+ @@/);
    expect(r.stdout.trim().endsWith('(dry run: nothing written)')).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(CLAUDE_SETTINGS);
  });
});

describe('codex', () => {
  it('sets model_provider and model at the root and adds [model_providers.router]; every other line stays', async () => {
    const file = put('.codex/config.toml', CODEX_TOML, 0o600);
    await ok('codex', '--key', KEY, '--yes');
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(
      CODEX_TOML.replace('model = "gpt-5-codex"', 'model = "openai/gpt-5"').replace('sandbox_mode = "workspace-write"\n', 'sandbox_mode = "workspace-write"\nmodel_provider = "router"\n') +
        `\n[model_providers.router]\nname = "router"\nbase_url = "${URL}/v1"\nwire_api = "responses"\nexperimental_bearer_token = "${KEY}"\n`,
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(backupDir('codex'), 'file-0'), 'utf8')).toBe(CODEX_TOML);
    await ok('codex', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(CODEX_TOML))).toBe(true);
  });

  it('replaces an existing [model_providers.router] table in place and keeps CRLF line ends', async () => {
    const crlf = 'model_provider = "openai"\r\n\r\n[model_providers.router]\r\nname = "old"\r\nbase_url = "http://old/v1"\r\n\r\n# keep me\r\n[tui]\r\nnotifications = true\r\n';
    const file = put('.codex/config.toml', crlf);
    await ok('codex', '--key', KEY, '--model', 'fast', '--yes');
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(
      `model_provider = "router"\r\nmodel = "fast"\r\n\r\n[model_providers.router]\r\nname = "router"\r\nbase_url = "${URL}/v1"\r\nwire_api = "responses"\r\nexperimental_bearer_token = "${KEY}"\r\n\r\n# keep me\r\n[tui]\r\nnotifications = true\r\n`,
    );
    await ok('codex', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(crlf))).toBe(true);
  });

  it('honours CODEX_HOME', async () => {
    const codexHome = join(configHome, 'elsewhere');
    process.env.CODEX_HOME = codexHome;
    try {
      await ok('codex', '--key', KEY, '--yes');
      expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toContain('[model_providers.router]');
    } finally {
      delete process.env.CODEX_HOME;
    }
  });
});

describe('opencode', () => {
  it('adds provider.router and sets model/small_model; other providers, mcp and instructions stay', async () => {
    const file = put('.config/opencode/opencode.json', OPENCODE_JSON);
    await ok('opencode', '--key', KEY, '--model', 'fast', '--small-model', 'openai/gpt-4o-mini', '--yes');
    const after = JSON.parse(readFileSync(file, 'utf8'));
    const before = JSON.parse(OPENCODE_JSON);
    expect(after.provider.router).toEqual({
      npm: '@ai-sdk/openai-compatible',
      name: 'router',
      options: { baseURL: `${URL}/v1`, apiKey: KEY },
      models: { fast: { name: 'fast' }, 'openai/gpt-4o-mini': { name: 'openai/gpt-4o-mini' } },
    });
    expect(after.provider.anthropic).toEqual(before.provider.anthropic);
    expect(after).toMatchObject({ model: 'router/fast', small_model: 'router/openai/gpt-4o-mini', theme: 'tokyonight', mcp: before.mcp, instructions: before.instructions });
    await ok('opencode', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(OPENCODE_JSON))).toBe(true);
  });
});

describe('gemini-cli', () => {
  const SETTINGS = '{\n  "ui": { "theme": "GitHub" },\n  "general": { "vimMode": true }\n}\n';
  const ENV = '# my own\nexport GOOGLE_CLOUD_PROJECT=my-proj\nGEMINI_API_KEY=AIza-old\n';

  it('sets the API-key auth and model in settings.json and the base URL and key in ~/.gemini/.env; the rest stays; undo is byte-identical', async () => {
    const settings = put('.gemini/settings.json', SETTINGS);
    const env = put('.gemini/.env', ENV, 0o600);
    await ok('gemini-cli', '--key', KEY, '--model', 'gemini/gemini-2.5-flash', '--yes');
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({
      ui: { theme: 'GitHub' },
      general: { vimMode: true },
      security: { auth: { selectedType: 'gemini-api-key' } },
      model: { name: 'gemini/gemini-2.5-flash' },
    });
    expect(readFileSync(env, 'utf8')).toBe(`# my own\nexport GOOGLE_CLOUD_PROJECT=my-proj\nGEMINI_API_KEY=${KEY}\nGOOGLE_GEMINI_BASE_URL=${URL}\n`);
    expect(statSync(env).mode & 0o777).toBe(0o600);
    await ok('gemini-cli', '--undo', '--yes');
    expect(readFileSync(settings).equals(Buffer.from(SETTINGS))).toBe(true);
    expect(readFileSync(env).equals(Buffer.from(ENV))).toBe(true);
  });
});

describe('cline', () => {
  it('switches both modes to the OpenAI-compatible provider and stores the key among the other secrets', async () => {
    const state = put('.cline/data/globalState.json', CLINE_STATE);
    const secrets = put('.cline/data/secrets.json', CLINE_SECRETS, 0o600);
    await ok('cline', '--key', KEY, '--yes');
    const s = JSON.parse(readFileSync(state, 'utf8'));
    expect(s).toMatchObject({
      ...JSON.parse(CLINE_STATE),
      actModeApiProvider: 'openai',
      planModeApiProvider: 'openai',
      openAiBaseUrl: `${URL}/v1`,
      actModeOpenAiModelId: 'anthropic/claude-sonnet-4-5',
      planModeOpenAiModelId: 'anthropic/claude-sonnet-4-5',
    });
    expect(readFileSync(state, 'utf8')).toMatch(/^\{\n\t"actModeApiProvider"/);
    expect(JSON.parse(readFileSync(secrets, 'utf8'))).toEqual({ ...JSON.parse(CLINE_SECRETS), openAiApiKey: KEY });
    expect(statSync(secrets).mode & 0o777).toBe(0o600);
    const dir = backupDir('cline');
    expect(readFileSync(join(dir, 'file-1'), 'utf8')).toBe(CLINE_STATE);
    expect(readFileSync(join(dir, 'file-2'), 'utf8')).toBe(CLINE_SECRETS);
    await ok('cline', '--undo', '--yes');
    expect(readFileSync(state).equals(Buffer.from(CLINE_STATE))).toBe(true);
    expect(readFileSync(secrets).equals(Buffer.from(CLINE_SECRETS))).toBe(true);
    // Cline CLI 3's providers file did not exist: undo removes the one config-tool wrote.
    expect(existsSync(join(configHome, '.cline', 'data', 'settings', 'providers.json'))).toBe(false);
  });

  it("Cline CLI 3: router's provider in settings/providers.json becomes the one in use, the user's others stay", async () => {
    const file = put('.cline/data/settings/providers.json', CLINE_PROVIDERS, 0o600);
    await ok('cline', '--key', KEY, '--yes');
    const o = JSON.parse(readFileSync(file, 'utf8'));
    expect(o.lastUsedProvider).toBe('openai-compatible');
    expect(o.providers.anthropic).toEqual(JSON.parse(CLINE_PROVIDERS).providers.anthropic);
    expect(o.providers['openai-compatible']).toMatchObject({
      settings: { provider: 'openai-compatible', apiKey: KEY, model: 'anthropic/claude-sonnet-4-5', baseUrl: `${URL}/v1` },
      tokenSource: 'manual',
    });
    expect(Number.isNaN(Date.parse(o.providers['openai-compatible'].updatedAt))).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await ok('cline', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(CLINE_PROVIDERS))).toBe(true);
  });
});

describe('qwen-code', () => {
  it("adds router's model provider entry (own key variable), selects it, keeps the user's entries and settings", async () => {
    const file = put('.qwen/settings.json', QWEN_SETTINGS);
    await ok('qwen-code', '--key', KEY, '--model', 'openai/gpt-5', '--yes');
    const o = JSON.parse(readFileSync(file, 'utf8'));
    expect(o).toMatchObject({ $version: 4, general: { enableAutoUpdate: false }, security: { auth: { selectedType: 'openai' } }, model: { name: 'openai/gpt-5' } });
    expect(o.modelProviders.openai).toEqual([
      { id: 'openai/gpt-5', name: 'openai/gpt-5 (router)', baseUrl: `${URL}/v1`, envKey: 'ROUTER_QWEN_API_KEY' },
      ...JSON.parse(QWEN_SETTINGS).modelProviders.openai,
    ]);
    expect(o.env).toEqual({ DASHSCOPE_API_KEY: 'sk-dashscope-mine', ROUTER_QWEN_API_KEY: KEY });
    await ok('qwen-code', '--undo', '--yes');
    expect(readFileSync(file).equals(Buffer.from(QWEN_SETTINGS))).toBe(true);
  });

  it('a new settings file carries the schema version, so Qwen Code does not rewrite it on start', async () => {
    await ok('qwen-code', '--key', KEY, '--yes');
    const file = join(configHome, '.qwen', 'settings.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).$version).toBe(4);
    await ok('qwen-code', '--undo', '--yes');
    expect(existsSync(file)).toBe(false);
  });
});

describe('copilot-cli', () => {
  it("adds router to providers.json as an OpenAI-compatible provider and selects router/<model> in settings.json", async () => {
    const settings = put('.copilot/settings.json', COPILOT_SETTINGS);
    await ok('copilot-cli', '--key', KEY, '--model', 'openai/gpt-5', '--yes');
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ ...JSON.parse(COPILOT_SETTINGS), model: 'router/openai/gpt-5' });
    const providers = join(configHome, '.copilot', 'providers.json');
    expect(JSON.parse(readFileSync(providers, 'utf8'))).toEqual({
      providers: [{ name: 'router', type: 'openai', baseUrl: `${URL}/v1`, apiKey: KEY }],
      models: [{ id: 'openai/gpt-5', provider: 'router', name: 'openai/gpt-5 (router)' }],
    });
    expect(statSync(providers).mode & 0o777).toBe(0o600);
    await ok('copilot-cli', '--undo', '--yes');
    expect(readFileSync(settings).equals(Buffer.from(COPILOT_SETTINGS))).toBe(true);
    expect(existsSync(providers)).toBe(false);
  });
});

describe('what each tool reads back (doctor, setup)', () => {
  const read = (id: string, files: Record<string, string>) => {
    const t = toolById(id)!;
    return readToolSettings(t, t.files({ configHome, env: {} }).map((path) => ({ path, text: files[path.slice(configHome.length + 1)] ?? null })));
  };
  const cp = (model: string) => ({
    '.copilot/settings.json': JSON.stringify({ model }),
    '.copilot/providers.json': JSON.stringify({ providers: [{ name: 'router', baseUrl: `${URL}/v1`, apiKey: KEY }], models: [] }),
  });

  it("router's address and key while the tool uses router's entry; nothing once it selects another", () => {
    expect(read('copilot-cli', cp('router/openai/gpt-5'))).toEqual({ baseUrl: URL, key: KEY });
    expect(read('copilot-cli', cp('claude-sonnet-4.6'))).toEqual({});
    const qwen = (name: string) => ({
      '.qwen/settings.json': JSON.stringify({ security: { auth: { selectedType: 'openai' } }, model: { name }, env: { ROUTER_QWEN_API_KEY: KEY }, modelProviders: { openai: [{ id: 'openai/gpt-5', baseUrl: `${URL}/v1`, envKey: 'ROUTER_QWEN_API_KEY' }] } }),
    });
    expect(read('qwen-code', qwen('openai/gpt-5'))).toEqual({ baseUrl: URL, key: KEY });
    expect(read('qwen-code', qwen('qwen3-coder-plus'))).toEqual({});
    const cline = (lastUsedProvider: string) => ({
      '.cline/data/settings/providers.json': JSON.stringify({ version: 1, lastUsedProvider, providers: { 'openai-compatible': { settings: { baseUrl: `${URL}/v1`, apiKey: KEY } } } }),
      '.cline/data/globalState.json': JSON.stringify({ openAiBaseUrl: `${URL}/v1` }),
      '.cline/data/secrets.json': JSON.stringify({ openAiApiKey: KEY }),
    });
    expect(read('cline', cline('openai-compatible'))).toEqual({ baseUrl: URL, key: KEY });
    // Cline 3 uses another provider now: the older state files still naming router do not count.
    expect(read('cline', cline('anthropic'))).toEqual({});
  });
});

describe('config-tool listing and pieces', () => {
  it('without a tool lists the tools, their files and whether router configured them', async () => {
    put('.codex/config.toml', CODEX_TOML);
    await ok('codex', '--key', KEY, '--yes');
    const list = json<any[]>(await ok('--json'));
    expect(list.map((t) => [t.id, t.configured])).toEqual([
      ['claude-code', false],
      ['codex', true],
      ['gemini-cli', false],
      ['opencode', false],
      ['cline', false],
      ['qwen-code', false],
      ['copilot-cli', false],
    ]);
    expect(list[1].files).toEqual([join(configHome, '.codex', 'config.toml')]);
  });

  it('an unknown tool is a usage error', async () => {
    expect((await tool('vim', '--yes')).exitCode).toBe(2);
  });

  it('toml edits: a root key is added after the last root key, before the first table', () => {
    expect(tomlSetRootKey('# c\na = 1\n\n[t]\nb = 2\n', 'k', '"v"')).toBe('# c\na = 1\nk = "v"\n\n[t]\nb = 2\n');
    expect(tomlSetRootKey('[t]\nk = 2\n', 'k', '"v"')).toBe('k = "v"\n[t]\nk = 2\n');
    expect(tomlSetRootKey('', 'k', '1')).toBe('k = 1');
    // A header-looking line inside a multi-line string is not a table.
    expect(tomlSetTable('s = """\n[x]\n"""\n', 'x', ['a = 1'])).toBe('s = """\n[x]\n"""\n\n[x]\na = 1\n');
  });

  it('diff: hunks with context, /dev/null for a new file', () => {
    expect(unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', 'f')).toBe('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c');
    expect(unifiedDiff(null, 'x\n', 'f')).toBe('--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x');
    expect(unifiedDiff('same\n', 'same\n', 'f')).toBe('');
  });
});
