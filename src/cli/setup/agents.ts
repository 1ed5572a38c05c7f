/**
 * The coding agents `router setup` configures and proves: which config-tool definition writes their
 * settings, how to ask them one question from a script, which shell variables would override what router
 * writes, and which providers' models they ask for first.
 */
import { QWEN_KEY_VARIABLE, toolById, type ToolDef } from '../../shared/agent-tools/tools.js';

export interface SetupAgent {
  id: string;
  tool: ToolDef;
  /** The agent's arguments for one prompt, answered and exited without a terminal; null: it has none. */
  proofArgs: ((prompt: string) => string[]) | null;
  /** Extra environment for the proof (settings a one-shot run needs; none changes where requests go). */
  proofEnv: Record<string, string>;
  /** Shell variables the agent prefers over the settings router writes. */
  overriddenBy: string[];
  /** Providers whose models the agent asks for first, best first. */
  prefers: string[];
}

const tool = (id: string) => toolById(id)!;

export const SETUP_AGENTS: readonly SetupAgent[] = [
  {
    id: 'claude-code',
    tool: tool('claude-code'),
    // settings.json `env` is applied over the shell's, so nothing in the shell overrides it.
    proofArgs: (p) => ['-p', p, '--output-format', 'text'],
    proofEnv: {},
    overriddenBy: [],
    prefers: ['anthropic', 'claude-code'],
  },
  {
    id: 'codex',
    tool: tool('codex'),
    // A folder that is not a git repository needs the flag; the default sandbox stays (read-only).
    proofArgs: (p) => ['exec', '--skip-git-repo-check', p],
    proofEnv: {},
    overriddenBy: [],
    prefers: ['openai', 'codex'],
  },
  {
    id: 'gemini-cli',
    tool: tool('gemini-cli'),
    proofArgs: (p) => ['-p', p],
    // Headless Gemini CLI runs only in a trusted folder, and reads ~/.gemini/.env only there.
    proofEnv: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    // dotenv never replaces a variable the shell already has.
    overriddenBy: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GEMINI_BASE_URL'],
    prefers: ['gemini', 'gemini-cli'],
  },
  {
    id: 'opencode',
    tool: tool('opencode'),
    proofArgs: (p) => ['run', p],
    proofEnv: {},
    overriddenBy: [],
    prefers: ['anthropic', 'openai', 'gemini'],
  },
  {
    id: 'cline',
    tool: tool('cline'),
    // A one-shot prompt runs in act mode with every tool approved unless told otherwise: the proof asks first.
    proofArgs: (p) => ['--auto-approve', 'false', p],
    // Without it a one-shot run starts Cline's background hub, which stays running after the answer.
    proofEnv: { CLINE_SESSION_BACKEND_MODE: 'local' },
    overriddenBy: [],
    prefers: ['anthropic', 'openai', 'gemini'],
  },
  {
    id: 'qwen-code',
    tool: tool('qwen-code'),
    // A positional prompt is one-shot: answered, then exit.
    proofArgs: (p) => [p],
    proofEnv: {},
    // Router's provider entry names its own base URL and key variable, so OPENAI_* in the shell do not matter.
    overriddenBy: [QWEN_KEY_VARIABLE],
    prefers: ['qwen', 'openai', 'anthropic', 'gemini'],
  },
  {
    id: 'copilot-cli',
    tool: tool('copilot-cli'),
    // -s: the answer only (no usage stats); tools stay behind their confirmation (none is allowed).
    proofArgs: (p) => ['-p', p, '-s'],
    proofEnv: {},
    // The environment's one-provider BYOK replaces providers.json; COPILOT_MODEL replaces the settings' model.
    overriddenBy: ['COPILOT_PROVIDER_BASE_URL', 'COPILOT_MODEL'],
    prefers: ['copilot', 'openai', 'anthropic', 'gemini'],
  },
];

/** Why setup leaves an agent AgentBridge finds alone, and what to do instead. */
export function notConfigured(id: string, name: string): { reason: string; fix: string } {
  if (id === 'cursor') {
    return {
      // Cursor keeps its model settings in the app's own database, and sends even a custom base URL's requests
      // from Cursor's servers, which cannot reach a router on this machine.
      reason: "Cursor's model requests go through Cursor's own servers, which cannot reach router on this machine, and its model settings live inside the Cursor app, not in a file",
      fix: 'use router from Cursor as an MCP server: `router mcp --client cursor` (docs/agents.md)',
    };
  }
  return { reason: `router setup cannot configure ${name} yet`, fix: 'point it at router by hand: docs/clients.md' };
}

export function setupAgent(id: string): SetupAgent | undefined {
  return SETUP_AGENTS.find((a) => a.id === id);
}

/** The model router setup points an agent at, per provider (others: the provider's first listed model). */
export const DEFAULT_MODELS: Record<string, string> = {
  anthropic: 'claude-sonnet-4-5',
  'claude-code': 'claude-sonnet-4-5',
  openai: 'gpt-5',
  codex: 'gpt-5',
  gemini: 'gemini-2.5-flash',
  'gemini-cli': 'gemini-2.5-flash',
};

/** The provider an agent asks for: its own first, else the first working account's. */
export function chooseProvider(agent: SetupAgent, working: readonly string[]): string | undefined {
  return agent.prefers.find((p) => working.includes(p)) ?? working[0];
}
