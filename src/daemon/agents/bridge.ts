/**
 * AgentBridge: which coding agents are installed on this machine, their versions, whether their settings
 * point at this router (the files `router config-tool` edits, read the same way), and router's own
 * endpoints for them (OpenAI, Anthropic and Gemini bases, MCP and A2A).
 */
import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { toolById } from '../../shared/agent-tools/tools.js';

/** One agent router knows how to find: its binaries and the settings files that may point at router. */
interface AgentSpec {
  id: string;
  name: string;
  binaries: string[];
  /** Settings files: a config-tool tool's own, or listed here for agents config-tool does not edit. */
  files(home: string, env: NodeJS.ProcessEnv): string[];
}

const toolFiles = (id: string) => (home: string, env: NodeJS.ProcessEnv) => toolById(id)?.files({ configHome: home, env }) ?? [];

const AGENTS: readonly AgentSpec[] = [
  { id: 'claude-code', name: 'Claude Code', binaries: ['claude'], files: toolFiles('claude-code') },
  { id: 'codex', name: 'Codex CLI', binaries: ['codex'], files: toolFiles('codex') },
  { id: 'gemini-cli', name: 'Gemini CLI', binaries: ['gemini'], files: toolFiles('gemini-cli') },
  { id: 'opencode', name: 'OpenCode', binaries: ['opencode'], files: toolFiles('opencode') },
  { id: 'cline', name: 'Cline', binaries: ['cline'], files: toolFiles('cline') },
  { id: 'qwen-code', name: 'Qwen Code', binaries: ['qwen'], files: toolFiles('qwen-code') },
  { id: 'copilot-cli', name: 'GitHub Copilot CLI', binaries: ['copilot'], files: toolFiles('copilot-cli') },
  { id: 'cursor', name: 'Cursor', binaries: ['cursor', 'cursor-agent'], files: (home) => [join(home, '.cursor', 'mcp.json')] },
];

/** Longest wait for one `--version` (a hung binary must not hold the reply). */
const VERSION_TIMEOUT_MS = 3000;
/** Settings files larger than this are not read (no agent keeps megabytes of settings). */
const MAX_SETTINGS_BYTES = 1024 * 1024;

export interface AgentFile {
  path: string;
  exists: boolean;
  /** The file names this router's address (host:port), as `router config-tool` writes it. */
  pointsAtRouter: boolean;
  /** The file names router's MCP endpoint. */
  mcp: boolean;
}

export interface AgentState {
  id: string;
  name: string;
  installed: boolean;
  /** The binary found on PATH, when installed. */
  path: string | null;
  version: string | null;
  files: AgentFile[];
  /** Some settings file of the agent points at this router. */
  configured: boolean;
}

export interface BridgeState {
  server: {
    baseUrl: string;
    version: string;
    endpoints: {
      openai: string;
      anthropic: string;
      gemini: string;
      mcp: { streamableHttp: string; sse: string };
      a2a: { agentCard: string; jsonRpc: string };
    };
  };
  agents: AgentState[];
}

/** The first executable named `name` on the PATH, or null. */
async function which(name: string, path: string | undefined): Promise<string | null> {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Versions already asked, by binary path, valid while the file is the same (inode, size, mtime): a binary
 * runs `--version` once per install or upgrade, so a hung one costs the timeout once, not on every call.
 * Concurrent callers share one run.
 */
const versions = new Map<string, { stamp: string; version: Promise<string | null> }>();

/** The version of the binary at `binary`, from the cache while the file is unchanged. */
async function versionOf(binary: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  let stamp: string;
  try {
    const st = await stat(binary);
    stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
  const known = versions.get(binary);
  if (known?.stamp === stamp) return known.version;
  const version = askVersion(binary, env);
  versions.set(binary, { stamp, version });
  return version;
}

/** The version an agent prints for `--version` (its first semver-like word, else its first line). */
async function askVersion(binary: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  // In its own process group, so a timeout ends whatever it started too (a wrapper script's children keep
  // the output pipe open otherwise, and the reply would wait for them).
  // execa is loaded on the first look for agents: about 5 MB a daemon that never looks does not carry.
  const { execa } = await import('execa');
  const child = execa(binary, ['--version'], { reject: false, stdin: 'ignore', env, extendEnv: false, detached: true });
  const timer = setTimeout(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, VERSION_TIMEOUT_MS);
  const r = await child.finally(() => clearTimeout(timer));
  if (r.failed && !r.stdout) return null;
  const text = `${r.stdout}\n${r.stderr}`.trim();
  const semver = /\d+\.\d+\.\d+(?:[-+][\w.]+)?/.exec(text);
  if (semver) return semver[0];
  const first = text.split('\n')[0]?.trim();
  return first ? first.slice(0, 100) : null;
}

/** The spellings of this router's address a settings file may hold. */
function addressesOf(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

async function inspectFile(path: string, addresses: string[]): Promise<AgentFile> {
  try {
    const buf = await readFile(path);
    const text = buf.length > MAX_SETTINGS_BYTES ? '' : buf.toString('utf8');
    const pointsAtRouter = addresses.some((a) => text.includes(a));
    return { path, exists: true, pointsAtRouter, mcp: pointsAtRouter && text.includes('/api/mcp') };
  } catch {
    return { path, exists: false, pointsAtRouter: false, mcp: false };
  }
}

export interface BridgeOptions {
  baseUrl: string;
  port: number;
  version: string;
  /** The environment agents are looked up in (PATH, XDG/CODEX homes); default: the daemon's. */
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** The state GET /api/tools/agent-bridge/state reports; every agent is inspected in parallel. */
export async function agentBridgeState(o: BridgeOptions): Promise<BridgeState> {
  const env = o.env ?? process.env;
  const home = o.home ?? homedir();
  const addresses = addressesOf(o.port);
  const agents = await Promise.all(
    AGENTS.map(async (spec): Promise<AgentState> => {
      let path: string | null = null;
      for (const b of spec.binaries) {
        path = await which(b, env.PATH);
        if (path) break;
      }
      const [version, files] = await Promise.all([
        path ? versionOf(path, env) : Promise.resolve(null),
        Promise.all(spec.files(home, env).map((f) => inspectFile(f, addresses))),
      ]);
      return { id: spec.id, name: spec.name, installed: path !== null, path, version, files, configured: files.some((f) => f.pointsAtRouter) };
    }),
  );
  const base = o.baseUrl.replace(/\/+$/, '');
  return {
    server: {
      baseUrl: base,
      version: o.version,
      endpoints: {
        openai: `${base}/v1`,
        anthropic: base,
        gemini: `${base}/v1beta`,
        mcp: { streamableHttp: `${base}/api/mcp/stream`, sse: `${base}/api/mcp/sse` },
        a2a: { agentCard: `${base}/.well-known/agent-card.json`, jsonRpc: `${base}/api/a2a` },
      },
    },
    agents,
  };
}
