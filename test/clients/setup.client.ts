/**
 * `router setup` with the pinned real agents (Claude Code, Codex CLI, Gemini CLI, opencode, Qwen Code,
 * Copilot CLI, Cline): the scenario of test/setup/scenario.ts (fresh HOME, provider keys in the environment
 * pointing at the mock upstream, one of them refused) with the agents' own binaries on PATH. setup finds
 * them through AgentBridge, writes their settings, proves each with `claude -p`, `codex exec`, `gemini -p`,
 * `opencode run`, `qwen <prompt>`, `copilot -p` and `cline <prompt>`; each then works on its own; a second
 * run changes nothing; `--undo` restores byte for byte.
 */
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENTS, ensureClient, type ClientName } from './install.js';
import { setupScenario } from '../setup/scenario.js';

const binDir = mkdtempSync(join(tmpdir(), 'router-real-agents-'));
const BINS: Record<ClientName, string> = {
  'claude-code': 'claude',
  codex: 'codex',
  'gemini-cli': 'gemini',
  opencode: 'opencode',
  'qwen-code': 'qwen',
  'copilot-cli': 'copilot',
  cline: 'cline',
};
for (const [client, bin] of Object.entries(BINS) as Array<[ClientName, string]>) {
  const { command, args } = await ensureClient(CLIENTS[client]);
  if (args.length === 0) symlinkSync(command, join(binDir, bin));
  else {
    // Gemini CLI and Qwen Code are JavaScript bundles: a launcher on PATH, as npm's own bin link would be.
    writeFileSync(join(binDir, bin), `#!/bin/sh\nexec '${command}' ${args.map((a) => `'${a}'`).join(' ')} "$@"\n`);
    chmodSync(join(binDir, bin), 0o755);
  }
}

setupScenario({
  title: 'router setup with the real agents',
  binDir,
  timeoutMs: 240_000,
  agents: [
    { bin: 'claude', id: 'claude-code', args: (p) => ['-p', p, '--output-format', 'text'], upstream: 'anthropic.messages' },
    { bin: 'codex', id: 'codex', args: (p) => ['exec', '--skip-git-repo-check', p], upstream: 'openai.responses' },
    {
      bin: 'gemini',
      id: 'gemini-cli',
      args: (p) => ['-p', p],
      upstream: 'gemini.stream',
      env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      // The user's own settings: no usage statistics, telemetry or update checks (setup keeps them).
      files: {
        '.gemini/settings.json': '{\n  "privacy": { "usageStatisticsEnabled": false },\n  "telemetry": { "enabled": false },\n  "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false }\n}\n',
      },
    },
    { bin: 'opencode', id: 'opencode', args: (p) => ['run', p], upstream: 'anthropic.messages', env: { OPENCODE_PURE: '1' } },
    { bin: 'qwen', id: 'qwen-code', args: (p) => [p], upstream: 'openai.chat' },
    { bin: 'copilot', id: 'copilot-cli', args: (p) => ['-p', p, '-s'], upstream: 'openai.chat', env: { COPILOT_AUTO_UPDATE: 'false' } },
    {
      bin: 'cline',
      id: 'cline',
      args: (p) => ['--auto-approve', 'false', p],
      upstream: 'anthropic.messages',
      // No background hub left running after a one-shot run; no update checks.
      env: { CLINE_SESSION_BACKEND_MODE: 'local', CLINE_NO_AUTO_UPDATE: '1' },
    },
  ],
});
