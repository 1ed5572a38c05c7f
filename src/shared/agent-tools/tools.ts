/**
 * The coding tools `router config-tool` can point at router: where each keeps its settings and what
 * router changes there. Each tool changes only its own keys; everything else in the files stays.
 */
import { join } from 'node:path';
import { dotenvGet, dotenvSet, editJson, setPath, tomlGet, tomlSetRootKey, tomlSetTable, tomlString } from './edit.js';

export interface ToolInput {
  /** The folder holding the tool's config (normally the user's home folder). */
  configHome: string;
  env: NodeJS.ProcessEnv;
  /** router's address without a path, e.g. http://127.0.0.1:20128. */
  baseUrl: string;
  /** The router API key the tool will send. */
  key: string;
  /** The model the tool asks for: `<provider>/<model>` or a combo name. */
  model: string;
  /** A smaller model for background work, where the tool has such a setting. */
  smallModel: string;
}

export interface ToolDef {
  id: string;
  name: string;
  /** Model used when --model is not given. */
  defaultModel: string;
  /** The files this tool's settings live in. */
  files(input: Pick<ToolInput, 'configHome' | 'env'>): string[];
  /** The new content of each file, given the current one (null: the file does not exist). */
  render(input: ToolInput, file: string, current: string | null): string;
  /** What to tell the user after writing. */
  note?: string;
  /** What a file holds of router's settings (as `render` writes them): the address and the key it sends. */
  read(file: string, text: string): ToolSettings;
}

/** The router settings found in a tool's file; `baseUrl` is router's address without a path. */
export interface ToolSettings {
  baseUrl?: string;
  key?: string;
}

/** A JSON object of a settings file, or {} when it is not one. */
function jsonOf(text: string): Record<string, any> {
  try {
    const v = JSON.parse(text.replace(/^\uFEFF/, ''));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** `http://h:p/v1` -> `http://h:p`: the address part of a base URL router wrote with an API path. */
function addressOf(url: unknown, suffix: string): string | undefined {
  if (typeof url !== 'string' || !url) return undefined;
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith(suffix) ? trimmed.slice(0, trimmed.length - suffix.length) : trimmed;
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

/** The settings of all of a tool's files, merged (later files fill what earlier ones lack). */
export function readToolSettings(tool: ToolDef, files: Array<{ path: string; text: string | null }>): ToolSettings {
  const out: ToolSettings = {};
  for (const f of files) {
    if (f.text === null) continue;
    const s = tool.read(f.path, f.text);
    out.baseUrl ??= s.baseUrl;
    out.key ??= s.key;
  }
  return out;
}

const claudeCode: ToolDef = {
  id: 'claude-code',
  name: 'Claude Code',
  defaultModel: 'anthropic/claude-sonnet-4-5',
  files: ({ configHome }) => [join(configHome, '.claude', 'settings.json')],
  render: (i, file, current) =>
    editJson(current, file, (o) => {
      // Claude Code speaks the Anthropic Messages API; router serves it at the root (the SDK adds /v1).
      setPath(o, ['env', 'ANTHROPIC_BASE_URL'], i.baseUrl);
      setPath(o, ['env', 'ANTHROPIC_AUTH_TOKEN'], i.key);
      setPath(o, ['env', 'ANTHROPIC_MODEL'], i.model);
      setPath(o, ['env', 'ANTHROPIC_DEFAULT_HAIKU_MODEL'], i.smallModel);
    }),
  note: 'Restart Claude Code to pick up the new settings.',
  read: (_file, text) => {
    const env = jsonOf(text).env ?? {};
    return { baseUrl: addressOf(env.ANTHROPIC_BASE_URL, ''), key: str(env.ANTHROPIC_AUTH_TOKEN) };
  },
};

const codex: ToolDef = {
  id: 'codex',
  name: 'Codex CLI',
  defaultModel: 'openai/gpt-5',
  files: ({ configHome, env }) => [join(env.CODEX_HOME || join(configHome, '.codex'), 'config.toml')],
  render: (i, _file, current) => {
    let text = current ?? '';
    text = tomlSetRootKey(text, 'model_provider', tomlString('router'));
    text = tomlSetRootKey(text, 'model', tomlString(i.model));
    return tomlSetTable(text, 'model_providers.router', [
      'name = "router"',
      `base_url = ${tomlString(`${i.baseUrl}/v1`)}`,
      'wire_api = "responses"',
      `experimental_bearer_token = ${tomlString(i.key)}`,
    ]);
  },
  read: (_file, text) => ({
    baseUrl: addressOf(tomlGet(text, 'model_providers.router', 'base_url'), '/v1'),
    key: tomlGet(text, 'model_providers.router', 'experimental_bearer_token'),
  }),
};

const opencode: ToolDef = {
  id: 'opencode',
  name: 'OpenCode',
  defaultModel: 'anthropic/claude-sonnet-4-5',
  files: ({ configHome, env }) => [join(env.XDG_CONFIG_HOME || join(configHome, '.config'), 'opencode', 'opencode.json')],
  render: (i, file, current) =>
    editJson(current, file, (o) => {
      if (current === null) o.$schema = 'https://opencode.ai/config.json';
      setPath(o, ['provider', 'router'], {
        npm: '@ai-sdk/openai-compatible',
        name: 'router',
        options: { baseURL: `${i.baseUrl}/v1`, apiKey: i.key },
        models: Object.fromEntries([...new Set([i.model, i.smallModel])].map((m) => [m, { name: m }])),
      });
      o.model = `router/${i.model}`;
      o.small_model = `router/${i.smallModel}`;
    }),
  read: (_file, text) => {
    const options = jsonOf(text).provider?.router?.options ?? {};
    return { baseUrl: addressOf(options.baseURL, '/v1'), key: str(options.apiKey) };
  },
};

const geminiDir = (configHome: string) => join(configHome, '.gemini');

const geminiCli: ToolDef = {
  id: 'gemini-cli',
  name: 'Gemini CLI',
  defaultModel: 'gemini/gemini-2.5-flash',
  files: ({ configHome }) => [join(geminiDir(configHome), 'settings.json'), join(geminiDir(configHome), '.env')],
  render: (i, file, current) =>
    file.endsWith('.env')
      ? // Gemini CLI reads ~/.gemini/.env in folders it trusts; a variable already in the shell wins over it.
        dotenvSet(current, { GOOGLE_GEMINI_BASE_URL: i.baseUrl, GEMINI_API_KEY: i.key })
      : editJson(current, file, (o) => {
          // The API-key auth; "gateway", which the base URL alone selects, is refused by `gemini -p`.
          setPath(o, ['security', 'auth', 'selectedType'], 'gemini-api-key');
          setPath(o, ['model', 'name'], i.model);
        }),
  note: 'A GEMINI_API_KEY or GOOGLE_GEMINI_BASE_URL set in your shell takes precedence over ~/.gemini/.env: unset them for Gemini CLI to use router.',
  read: (file, text) => (file.endsWith('.env') ? { baseUrl: addressOf(dotenvGet(text, 'GOOGLE_GEMINI_BASE_URL'), ''), key: dotenvGet(text, 'GEMINI_API_KEY') } : {}),
};

const clineDir = (configHome: string) => join(configHome, '.cline', 'data');

const cline: ToolDef = {
  id: 'cline',
  name: 'Cline (CLI and its shared state)',
  defaultModel: 'anthropic/claude-sonnet-4-5',
  files: ({ configHome }) => [join(clineDir(configHome), 'globalState.json'), join(clineDir(configHome), 'secrets.json')],
  render: (i, file, current) =>
    file.endsWith('secrets.json')
      ? editJson(current, file, (o) => {
          o.openAiApiKey = i.key;
        })
      : editJson(current, file, (o) => {
          // Cline's "OpenAI Compatible" provider, for both its plan and act modes.
          o.actModeApiProvider = 'openai';
          o.planModeApiProvider = 'openai';
          o.openAiBaseUrl = `${i.baseUrl}/v1`;
          o.actModeOpenAiModelId = i.model;
          o.planModeOpenAiModelId = i.model;
        }),
  note: 'The VS Code extension keeps its own settings: there, choose "OpenAI Compatible" with the same base URL, key and model.',
  read: (file, text) => {
    const o = jsonOf(text);
    return file.endsWith('secrets.json') ? { key: str(o.openAiApiKey) } : { baseUrl: addressOf(o.openAiBaseUrl, '/v1') };
  },
};

export const TOOLS: readonly ToolDef[] = [claudeCode, codex, geminiCli, opencode, cline];

export function toolById(id: string): ToolDef | undefined {
  return TOOLS.find((t) => t.id === id);
}
