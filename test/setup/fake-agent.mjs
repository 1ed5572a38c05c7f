#!/usr/bin/env node
/**
 * A stand-in for the coding agents' binaries in the default suite (the real ones run in the clients suite,
 * test/clients/setup.client.ts). Named by the link it is run through (claude, codex, gemini, opencode, qwen,
 * copilot, cline), it reads that agent's own settings files the way the agent does (precedence included) and
 * sends one request in that agent's wire format to wherever they point, printing the reply's text.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

const name = basename(process.argv[1]);
const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log(`${name} 9.9.${name.length} (fake)`);
  process.exit(0);
}
const home = homedir();
const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : null);
const fail = (msg) => {
  console.error(msg);
  process.exit(1);
};

/** The value of `key` in the TOML table `[table]` ('' for the root), string values only. */
function toml(text, table, key) {
  let current = '';
  for (const line of text.split(/\r?\n/)) {
    const h = /^\s*\[([^\]]+)\]/.exec(line);
    if (h) current = h[1].trim();
    else if (current === table) {
      const m = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`).exec(line);
      if (m) return m[1];
    }
  }
  return undefined;
}

function dotenv(text) {
  const out = {};
  for (const line of (text ?? '').split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Z0-9_]+)\s*=\s*(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, '$1');
  }
  return out;
}

async function send(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) fail(`API Error: ${res.status} ${text}`);
  return JSON.parse(text);
}

const prompt = (flag) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : args[args.length - 1];
};

if (name === 'claude') {
  // settings.json `env` is applied over the shell's environment.
  const settings = JSON.parse(read(join(process.env.CLAUDE_CONFIG_DIR ?? join(home, '.claude'), 'settings.json')) ?? '{}');
  const env = { ...process.env, ...(settings.env ?? {}) };
  const base = env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com';
  const headers = { 'anthropic-version': '2023-06-01' };
  if (env.ANTHROPIC_AUTH_TOKEN) headers.authorization = `Bearer ${env.ANTHROPIC_AUTH_TOKEN}`;
  if (env.ANTHROPIC_API_KEY) headers['x-api-key'] = env.ANTHROPIC_API_KEY;
  const reply = await send(`${base}/v1/messages`, headers, { model: env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: prompt('-p') }] });
  console.log(reply.content.map((c) => c.text ?? '').join(''));
} else if (name === 'codex') {
  const text = read(join(process.env.CODEX_HOME || join(home, '.codex'), 'config.toml')) ?? '';
  const provider = toml(text, '', 'model_provider') ?? 'openai';
  const base = toml(text, `model_providers.${provider}`, 'base_url') ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
  const key = toml(text, `model_providers.${provider}`, 'experimental_bearer_token') ?? process.env.OPENAI_API_KEY;
  const reply = await send(`${base}/responses`, { authorization: `Bearer ${key}` }, { model: toml(text, '', 'model') ?? 'gpt-5', input: args[args.length - 1] });
  console.log(reply.output.flatMap((o) => o.content ?? []).map((c) => c.text ?? '').join(''));
} else if (name === 'gemini') {
  // Headless runs only in a trusted folder; ~/.gemini/.env never replaces a variable the shell has.
  if (process.env.GEMINI_CLI_TRUST_WORKSPACE !== 'true') fail('Gemini CLI is not running in a trusted directory.');
  const env = { ...dotenv(read(join(home, '.gemini', '.env'))), ...process.env };
  const settings = JSON.parse(read(join(home, '.gemini', 'settings.json')) ?? '{}');
  const base = env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com';
  const model = settings.model?.name ?? 'gemini-2.5-pro';
  const reply = await send(`${base}/v1beta/models/${model}:generateContent`, { 'x-goog-api-key': env.GEMINI_API_KEY ?? '' }, { contents: [{ role: 'user', parts: [{ text: prompt('-p') }] }] });
  console.log(reply.candidates[0].content.parts.map((p) => p.text ?? '').join(''));
} else if (name === 'opencode') {
  const config = JSON.parse(read(join(process.env.XDG_CONFIG_HOME || join(home, '.config'), 'opencode', 'opencode.json')) ?? '{}');
  const [providerId, ...rest] = String(config.model ?? '').split('/');
  const options = config.provider?.[providerId]?.options;
  if (!options) fail(`Error: provider ${providerId} is not configured`);
  const reply = await send(`${options.baseURL}/chat/completions`, { authorization: `Bearer ${options.apiKey}` }, { model: rest.join('/'), messages: [{ role: 'user', content: args[args.length - 1] }] });
  console.log(reply.choices[0].message.content);
} else if (name === 'qwen') {
  // Qwen Code: the selected model's provider entry names the base URL and the variable holding the key
  // (shell first, then ~/.qwen/.env, then the settings' `env`); without one, OPENAI_* from the environment.
  const settings = JSON.parse(read(join(home, '.qwen', 'settings.json')) ?? '{}');
  const model = process.env.OPENAI_MODEL && !settings.model?.name ? process.env.OPENAI_MODEL : settings.model?.name;
  const entry = settings.security?.auth?.selectedType === 'openai' ? (settings.modelProviders?.openai ?? []).find((m) => m.id === model) : undefined;
  const env = { ...(settings.env ?? {}), ...dotenv(read(join(home, '.qwen', '.env'))), ...process.env };
  const base = entry?.baseUrl ?? env.OPENAI_BASE_URL;
  const key = env[entry?.envKey ?? 'OPENAI_API_KEY'];
  if (!base || !key) fail('No auth type is selected: run qwen and /auth');
  const reply = await send(`${base}/chat/completions`, { authorization: `Bearer ${key}` }, { model, messages: [{ role: 'user', content: args.includes('-p') ? prompt('-p') : args[args.length - 1] }] });
  console.log(reply.choices[0].message.content);
} else if (name === 'copilot') {
  // Copilot CLI: BYOK from the environment wins; else the settings' model `<provider>/<id>` from providers.json.
  const dir = process.env.COPILOT_HOME || join(home, '.copilot');
  let base = process.env.COPILOT_PROVIDER_BASE_URL;
  let key = process.env.COPILOT_PROVIDER_API_KEY;
  let model = process.env.COPILOT_MODEL;
  if (!base) {
    const settings = JSON.parse(read(join(dir, 'settings.json')) ?? '{}');
    const config = JSON.parse(read(process.env.COPILOT_PROVIDERS_CONFIG || join(dir, 'providers.json')) ?? '{}');
    const selected = String(model ?? settings.model ?? '');
    const slash = selected.indexOf('/');
    const provider = (config.providers ?? []).find((p) => p.name === selected.slice(0, slash));
    const entry = (config.models ?? []).find((m) => m.provider === provider?.name && m.id === selected.slice(slash + 1));
    if (!provider || !entry) fail('Error: No supported model available');
    base = provider.baseUrl;
    key = provider.apiKey;
    model = entry.wireModel ?? entry.id;
  }
  const reply = await send(`${base}/chat/completions`, { authorization: `Bearer ${key}` }, { model, messages: [{ role: 'user', content: prompt('-p') }] });
  console.log(reply.choices[0].message.content);
} else if (name === 'cline') {
  // Cline CLI 3: the provider used last in settings/providers.json.
  const data = process.env.CLINE_DATA_DIR || join(process.env.CLINE_DIR || join(home, '.cline'), 'data');
  const config = JSON.parse(read(process.env.CLINE_PROVIDER_SETTINGS_PATH || join(data, 'settings', 'providers.json')) ?? '{}');
  const settings = config.providers?.[config.lastUsedProvider]?.settings;
  if (settings?.provider !== 'openai-compatible') fail(`Error: provider ${config.lastUsedProvider ?? '(none)'} is not configured`);
  // As Cline does on every run: the provider in use is stamped with the time.
  config.providers[config.lastUsedProvider].updatedAt = new Date().toISOString();
  writeFileSync(process.env.CLINE_PROVIDER_SETTINGS_PATH || join(data, 'settings', 'providers.json'), `${JSON.stringify(config, null, 2)}\n`);
  const reply = await send(`${settings.baseUrl}/chat/completions`, { authorization: `Bearer ${settings.apiKey}` }, { model: settings.model, messages: [{ role: 'user', content: args[args.length - 1] }] });
  console.log(reply.choices[0].message.content);
} else {
  fail(`unknown fake agent ${name}`);
}
