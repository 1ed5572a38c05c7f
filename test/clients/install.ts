/**
 * The real coding agents the client suite drives, pinned, and where their binaries end up. Each is installed
 * from the npm registry into `.clients/<name>@<version>/` (gitignored) once, then reused: a version bump here
 * installs beside the old one. Install scripts are not run (`--ignore-scripts`); the native binaries are taken
 * straight from each package's platform package instead, which is all their postinstall does.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { REPO_ROOT } from '../support/cli.js';

export type ClientName = 'claude-code' | 'codex' | 'gemini-cli' | 'opencode' | 'qwen-code' | 'copilot-cli' | 'cline';

export interface ClientSpec {
  name: ClientName;
  pkg: string;
  version: string;
  /** Path of the executable inside the install folder, for this platform. */
  bin(dir: string): string;
  /** Whether `bin` is a JavaScript entry to run with node (else a native executable). */
  node?: boolean;
}

const platform = `${process.platform}-${process.arch}`;
const muslArch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';

export const CLIENTS: Record<ClientName, ClientSpec> = {
  'claude-code': {
    name: 'claude-code',
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.332',
    bin: (dir) => join(dir, 'node_modules', '@anthropic-ai', `claude-code-${platform}`, 'claude'),
  },
  codex: {
    name: 'codex',
    pkg: '@openai/codex',
    version: '0.169.0',
    bin: (dir) => join(dir, 'node_modules', '@openai', `codex-${platform}`, 'vendor', `${muslArch}-unknown-linux-musl`, 'bin', 'codex'),
  },
  'gemini-cli': {
    name: 'gemini-cli',
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    bin: (dir) => join(dir, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js'),
    node: true,
  },
  opencode: {
    name: 'opencode',
    pkg: 'opencode-ai',
    version: '1.18.33',
    bin: (dir) => join(dir, 'node_modules', `opencode-${platform}`, 'bin', 'opencode'),
  },
  // Its package asks for Node 22; the bundle runs on the Node 20 the project pins for what the suite needs of it.
  'qwen-code': {
    name: 'qwen-code',
    pkg: '@qwen-code/qwen-code',
    version: '0.24.4',
    bin: (dir) => join(dir, 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js'),
    node: true,
  },
  'copilot-cli': {
    name: 'copilot-cli',
    pkg: '@github/copilot',
    version: '1.0.102',
    bin: (dir) => join(dir, 'node_modules', '@github', `copilot-${platform}`, 'copilot'),
  },
  cline: {
    name: 'cline',
    pkg: 'cline',
    version: '3.0.65',
    bin: (dir) => join(dir, 'node_modules', '@cline', `cli-${platform}`, 'bin', 'cline'),
  },
};

export const CLIENTS_DIR = join(REPO_ROOT, '.clients');

function installDir(spec: ClientSpec): string {
  return join(CLIENTS_DIR, `${spec.name}@${spec.version}`);
}

/** Installs one client unless this version is already there; returns the command that runs it. */
export async function ensureClient(spec: ClientSpec): Promise<{ command: string; args: string[] }> {
  const dir = installDir(spec);
  const marker = join(dir, '.installed');
  const bin = spec.bin(dir);
  if (!existsSync(marker) || !existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `router-clients-${spec.name}`, private: true }));
    const r = await execa('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', '--loglevel=error', `${spec.pkg}@${spec.version}`], {
      cwd: dir,
      reject: false,
      all: true,
      timeout: 900_000,
    });
    if (r.exitCode !== 0) throw new Error(`npm install ${spec.pkg}@${spec.version} failed:\n${r.all}`);
    if (!existsSync(bin)) throw new Error(`${spec.pkg}@${spec.version} has no binary for ${platform} at ${bin}`);
    writeFileSync(marker, `${spec.pkg}@${spec.version}\n`);
  }
  return spec.node ? { command: process.execPath, args: [bin] } : { command: bin, args: [] };
}

/** The version an installed client reports, for the suite's log. */
export function installedVersion(spec: ClientSpec): string | undefined {
  try {
    return readFileSync(join(installDir(spec), '.installed'), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * vitest globalSetup: install every client before the suite (in parallel; each once per version).
 * CLIENTS_ONLY=claude-code,codex installs only those (a run of one client's files).
 */
export async function setup(): Promise<void> {
  const only = process.env.CLIENTS_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  await Promise.all(Object.values(CLIENTS).filter((spec) => !only?.length || only.includes(spec.name)).map((spec) => ensureClient(spec)));
}
