/**
 * `router setup`, `--undo` and the doctor after it, in the default suite: stand-ins for the agents'
 * binaries (fake-agent.mjs, linked as claude, codex, gemini, opencode, qwen, copilot and cline) that read
 * the agents' own settings files as the agents do and speak their wire formats. The same scenario runs with
 * the pinned real agents in the clients suite (test/clients/setup.client.ts).
 */
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupScenario } from './scenario.js';

const FAKE = fileURLToPath(new URL('./fake-agent.mjs', import.meta.url));
const binDir = mkdtempSync(join(tmpdir(), 'router-fake-agents-'));
for (const name of ['claude', 'codex', 'gemini', 'opencode', 'qwen', 'copilot', 'cline', 'cursor-agent']) symlinkSync(FAKE, join(binDir, name));

setupScenario({
  title: 'router setup with stand-in agents',
  binDir,
  timeoutMs: 60_000,
  agents: [
    { bin: 'claude', id: 'claude-code', args: (p) => ['-p', p], upstream: 'anthropic.messages' },
    { bin: 'codex', id: 'codex', args: (p) => ['exec', '--skip-git-repo-check', p], upstream: 'openai.responses' },
    { bin: 'gemini', id: 'gemini-cli', args: (p) => ['-p', p], upstream: 'gemini.generate', env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' } },
    { bin: 'opencode', id: 'opencode', args: (p) => ['run', p], upstream: 'anthropic.messages' },
    { bin: 'qwen', id: 'qwen-code', args: (p) => [p], upstream: 'openai.chat' },
    { bin: 'copilot', id: 'copilot-cli', args: (p) => ['-p', p, '-s'], upstream: 'openai.chat' },
    { bin: 'cline', id: 'cline', args: (p) => [p], upstream: 'anthropic.messages' },
  ],
  // Found, listed, not touched: Cursor's model requests come from Cursor's servers.
  leftAlone: [{ bin: 'cursor-agent', id: 'cursor', reason: /Cursor's model requests go through Cursor's own servers/ }],
});
