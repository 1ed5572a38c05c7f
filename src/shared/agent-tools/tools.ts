/**
 * The coding tools `router config-tool` can point at router: where each keeps its settings and what
 * router changes there. Each tool changes only its own keys; everything else in the files stays.
 */
import { join } from 'node:path';
import { sha256 } from './backup.js';
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
  /**
   * The file's text less what the tool itself rewrites each time it runs (e.g. a last-used timestamp), so
   * undo does not take the tool's own bookkeeping for an edit of the user's. Absent: the whole text counts.
   */
  stable?(file: string, text: string): string;
}

/** Hashes of what router writes to a tool's file: the bytes, and the bytes less the tool's own bookkeeping. */
export function writtenHashes(tool: ToolDef, path: string, text: string): { writtenSha256: string; stableSha256?: string } {
  return { writtenSha256: sha256(text), ...(tool.stable ? { stableSha256: sha256(tool.stable(path, text)) } : {}) };
}

/** The router settings found in a tool's file; `baseUrl` is router's address without a path. */
export interface ToolSettings {
  baseUrl?: string;
  key?: string;
  /** The file selects something else (another provider or model): router's settings, if any, are not in use. */
  off?: boolean;
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
    if (s.off) return {};
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

/** Cline's data folder (CLINE_DATA_DIR, else data/ in CLINE_DIR or ~/.cline), as the Cline CLI resolves it. */
const clineData = (configHome: string, env: NodeJS.ProcessEnv) => env.CLINE_DATA_DIR?.trim() || join(env.CLINE_DIR?.trim() || join(configHome, '.cline'), 'data');
/** Cline CLI 3's id for an OpenAI-compatible endpoint (its `openai` of the older state files). */
const CLINE_PROVIDER = 'openai-compatible';

const cline: ToolDef = {
  id: 'cline',
  name: 'Cline (CLI and its shared state)',
  defaultModel: 'anthropic/claude-sonnet-4-5',
  // Cline CLI 3 reads settings/providers.json; the two state files are what Cline 2 read (and what Cline 3
  // migrates from once). providers.json comes first: what it says wins.
  files: ({ configHome, env }) => {
    const data = clineData(configHome, env);
    return [env.CLINE_PROVIDER_SETTINGS_PATH?.trim() || join(data, 'settings', 'providers.json'), join(data, 'globalState.json'), join(data, 'secrets.json')];
  },
  render: (i, file, current) => {
    if (file.endsWith('secrets.json')) {
      return editJson(current, file, (o) => {
        o.openAiApiKey = i.key;
      });
    }
    if (file.endsWith('globalState.json')) {
      return editJson(current, file, (o) => {
        // Cline's "OpenAI Compatible" provider, for both its plan and act modes.
        o.actModeApiProvider = 'openai';
        o.planModeApiProvider = 'openai';
        o.openAiBaseUrl = `${i.baseUrl}/v1`;
        o.actModeOpenAiModelId = i.model;
        o.planModeOpenAiModelId = i.model;
      });
    }
    return editJson(current, file, (o) => {
      o.version ??= 1;
      o.modes ??= {};
      const providers = (o.providers && typeof o.providers === 'object' ? o.providers : {}) as Record<string, any>;
      const before = providers[CLINE_PROVIDER];
      const settings = { ...(before?.settings ?? {}), provider: CLINE_PROVIDER, apiKey: i.key, model: i.model, baseUrl: `${i.baseUrl}/v1` };
      const same = before && JSON.stringify(before.settings) === JSON.stringify(settings);
      providers[CLINE_PROVIDER] = { ...(before ?? {}), settings, updatedAt: same ? before.updatedAt : new Date().toISOString(), tokenSource: 'manual' };
      o.providers = providers;
      o.lastUsedProvider = CLINE_PROVIDER;
    });
  },
  note: 'The VS Code extension keeps its own settings: there, choose "OpenAI Compatible" with the same base URL, key and model.',
  read: (file, text) => {
    const o = jsonOf(text);
    if (file.endsWith('secrets.json')) return { key: str(o.openAiApiKey) };
    if (file.endsWith('globalState.json')) return { baseUrl: addressOf(o.openAiBaseUrl, '/v1') };
    // Cline 3 uses the provider it used last: another one there means Cline no longer sends to router.
    if (o.lastUsedProvider !== CLINE_PROVIDER) return { off: true };
    const settings = o.providers?.[CLINE_PROVIDER]?.settings ?? {};
    return { baseUrl: addressOf(settings.baseUrl, '/v1'), key: str(settings.apiKey) };
  },
  // Cline 3 stamps the provider in use with the time of every run.
  stable: (file, text) => {
    if (!file.endsWith('providers.json')) return text;
    try {
      const o = JSON.parse(text);
      for (const p of Object.values(o?.providers ?? {})) if (p && typeof p === 'object') delete (p as Record<string, unknown>).updatedAt;
      return JSON.stringify(o);
    } catch {
      return text;
    }
  },
};

/** The variable router's key sits under in Qwen Code's settings: a name no shell sets for another purpose. */
export const QWEN_KEY_VARIABLE = 'ROUTER_QWEN_API_KEY';
/** Qwen Code's settings schema version of the pinned release: a new file carries it, so Qwen does not migrate (rewrite) it. */
const QWEN_SETTINGS_VERSION = 4;

const qwenCode: ToolDef = {
  id: 'qwen-code',
  name: 'Qwen Code',
  defaultModel: 'openai/gpt-5',
  files: ({ configHome }) => [join(configHome, '.qwen', 'settings.json')],
  render: (i, file, current) =>
    editJson(current, file, (o) => {
      if (current === null) o.$version = QWEN_SETTINGS_VERSION;
      // A model provider entry of router's own: its baseUrl wins over OPENAI_BASE_URL in the shell, and its key
      // variable is one the shell does not set (`env` here is only a fallback for variables the shell lacks).
      const openai = Array.isArray(o.modelProviders && (o.modelProviders as any).openai) ? ((o.modelProviders as any).openai as any[]) : [];
      const mine = [...new Set([i.model, i.smallModel])].map((id) => ({ id, name: `${id} (router)`, baseUrl: `${i.baseUrl}/v1`, envKey: QWEN_KEY_VARIABLE }));
      setPath(o, ['modelProviders', 'openai'], [...mine, ...openai.filter((m) => m?.envKey !== QWEN_KEY_VARIABLE)]);
      setPath(o, ['env', QWEN_KEY_VARIABLE], i.key);
      setPath(o, ['security', 'auth', 'selectedType'], 'openai');
      setPath(o, ['model', 'name'], i.model);
    }),
  read: (_file, text) => {
    const o = jsonOf(text);
    const name = o.model?.name;
    const entry = (Array.isArray(o.modelProviders?.openai) ? o.modelProviders.openai : []).find((m: any) => m?.envKey === QWEN_KEY_VARIABLE && m?.id === name);
    // Another model selected (or another auth type): Qwen Code no longer sends to router.
    if (!entry || o.security?.auth?.selectedType !== 'openai') return { off: true };
    return { baseUrl: addressOf(entry.baseUrl, '/v1'), key: str(o.env?.[QWEN_KEY_VARIABLE]) };
  },
};

/** Copilot CLI's folder: COPILOT_HOME, else ~/.copilot. */
const copilotHome = (configHome: string, env: NodeJS.ProcessEnv) => env.COPILOT_HOME?.trim() || join(configHome, '.copilot');
/** The name of router's provider in Copilot CLI's providers.json; models are selected as `router/<id>`. */
const COPILOT_PROVIDER = 'router';

const copilotCli: ToolDef = {
  id: 'copilot-cli',
  name: 'GitHub Copilot CLI',
  defaultModel: 'openai/gpt-5',
  files: ({ configHome, env }) => [join(copilotHome(configHome, env), 'settings.json'), env.COPILOT_PROVIDERS_CONFIG?.trim() || join(copilotHome(configHome, env), 'providers.json')],
  render: (i, file, current) =>
    file.endsWith('settings.json')
      ? editJson(current, file, (o) => {
          o.model = `${COPILOT_PROVIDER}/${i.model}`;
        })
      : // Copilot CLI's own BYOK providers file: router as an OpenAI-compatible (Chat Completions) provider.
        editJson(current, file, (o) => {
          const providers = Array.isArray(o.providers) ? (o.providers as any[]) : [];
          const models = Array.isArray(o.models) ? (o.models as any[]) : [];
          o.providers = [...providers.filter((p) => p?.name !== COPILOT_PROVIDER), { name: COPILOT_PROVIDER, type: 'openai', baseUrl: `${i.baseUrl}/v1`, apiKey: i.key }];
          o.models = [...models.filter((m) => m?.provider !== COPILOT_PROVIDER), ...[...new Set([i.model, i.smallModel])].map((id) => ({ id, provider: COPILOT_PROVIDER, name: `${id} (router)` }))];
        }),
  note: 'COPILOT_PROVIDER_BASE_URL or COPILOT_MODEL set in your shell take precedence over these files: unset them for Copilot CLI to use router.',
  read: (file, text) => {
    const o = jsonOf(text);
    if (file.endsWith('settings.json')) {
      // Another model selected: Copilot CLI no longer sends to router.
      return typeof o.model === 'string' && o.model.startsWith(`${COPILOT_PROVIDER}/`) ? {} : { off: true };
    }
    const p = (Array.isArray(o.providers) ? o.providers : []).find((x: any) => x?.name === COPILOT_PROVIDER);
    return p ? { baseUrl: addressOf(p.baseUrl, '/v1'), key: str(p.apiKey) } : {};
  },
};

export const TOOLS: readonly ToolDef[] = [claudeCode, codex, geminiCli, opencode, cline, qwenCode, copilotCli];

export function toolById(id: string): ToolDef | undefined {
  return TOOLS.find((t) => t.id === id);
}
