/**
 * Where importable accounts live on this machine: the CLIs' own credential files under the user's home
 * folder. Every read is bounded (size) and a file that is absent, unreadable or not in the expected format
 * is skipped: discovery reports what it can import, never why a stranger's file was odd.
 */

import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  parseAntigravity,
  parseClaudeCode,
  parseCodex,
  parseGeminiCli,
  parseGithubCopilot,
  parseQwenCode,
  type ParsedAccount,
} from './formats.js';

/** One importable account and where it came from. `service` never contains `:` (CLI form `service:account`). */
export interface CredentialSource {
  service: string;
  account: string;
  kind: 'file' | 'keychain';
  parsed: ParsedAccount;
}

/** Credential files are small; anything bigger is not one of them. */
const MAX_FILE_BYTES = 256 * 1024;

interface KnownFile {
  /** Path relative to the home folder, `/`-separated (shown as `~/<path>`). */
  path: string;
  parse: (doc: unknown) => ParsedAccount[];
}

/** The Antigravity CLI's own login file (relative to home). */
export const AGY_TOKEN_FILE = '.gemini/antigravity-cli/antigravity-oauth-token';

/** The credential files router knows, relative to the home folder. */
export const KNOWN_FILES: readonly KnownFile[] = [
  { path: '.claude/.credentials.json', parse: parseClaudeCode },
  { path: '.codex/auth.json', parse: parseCodex },
  { path: '.gemini/oauth_creds.json', parse: parseGeminiCli },
  { path: '.qwen/oauth_creds.json', parse: parseQwenCode },
  { path: '.config/github-copilot/apps.json', parse: parseGithubCopilot },
  { path: '.config/github-copilot/hosts.json', parse: parseGithubCopilot },
  // Windows keeps them under %LOCALAPPDATA%.
  { path: 'AppData/Local/github-copilot/apps.json', parse: parseGithubCopilot },
  { path: 'AppData/Local/github-copilot/hosts.json', parse: parseGithubCopilot },
  { path: AGY_TOKEN_FILE, parse: parseAntigravity },
];

/** The user's home folder (HOME on POSIX, USERPROFILE on Windows, as Node resolves it). */
export function userHome(): string {
  return homedir();
}

/**
 * The CLIs' own overrides of where their credential files live, and the file inside that folder:
 * - `CODEX_HOME` replaces `~/.codex` (codex-rs/utils/home-dir/src/lib.rs `find_codex_home`: a non-empty
 *   CODEX_HOME, else `~/.codex`; auth.json lives in it).
 * - `CLAUDE_CONFIG_DIR` replaces `~/.claude` (Claude Code's cli.js, @anthropic-ai/claude-code 2.0.77:
 *   `process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude")`, and the plaintext store is
 *   `.credentials.json` in it).
 */
const DIR_OVERRIDES = [
  { env: 'CODEX_HOME', file: 'auth.json', parse: parseCodex },
  { env: 'CLAUDE_CONFIG_DIR', file: '.credentials.json', parse: parseClaudeCode },
] as const;

/** A credential file at an absolute path, listed under `label` (the service; never contains `:`). */
interface LocatedFile {
  label: string;
  file: string;
  parse: (doc: unknown) => ParsedAccount[];
}

/**
 * Every credential file to look at: the known files under `home`, and for each CLI whose folder override is
 * set in `env`, the file in that folder too, listed as `$CODEX_HOME/auth.json` /
 * `$CLAUDE_CONFIG_DIR/.credentials.json`. The default location is still read: the daemon's environment
 * is not necessarily the shell a CLI logged in from, and discovery only lists what it finds.
 */
export function credentialFiles(home: string, env: NodeJS.ProcessEnv = process.env): LocatedFile[] {
  const files: LocatedFile[] = KNOWN_FILES.map((k) => ({ label: `~/${k.path}`, file: join(home, ...k.path.split('/')), parse: k.parse }));
  for (const o of DIR_OVERRIDES) {
    const dir = env[o.env];
    if (!dir) continue;
    // A relative value is relative to the working folder, as for the CLIs themselves.
    const file = resolve(dir, o.file);
    if (!files.some((f) => f.file === file)) files.push({ label: `$${o.env}/${o.file}`, file, parse: o.parse });
  }
  return files;
}

/** Reads and parses one JSON file of at most MAX_FILE_BYTES; undefined when absent or unusable. */
export async function readJsonFile(file: string): Promise<unknown> {
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined;
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The accounts of one credential file, or [] when it is absent or not in its format. */
async function readLocatedFile(located: LocatedFile): Promise<CredentialSource[]> {
  const doc = await readJsonFile(located.file);
  if (doc === undefined) return [];
  let parsed: ParsedAccount[];
  try {
    parsed = located.parse(doc);
  } catch {
    return [];
  }
  return parsed.map((p) => ({ service: located.label, account: p.label, kind: 'file' as const, parsed: p }));
}

/** The accounts of one known file under `home`, or [] when it is absent or not in its format. */
export function readKnownFile(home: string, known: KnownFile): Promise<CredentialSource[]> {
  return readLocatedFile({ label: `~/${known.path}`, file: join(home, ...known.path.split('/')), parse: known.parse });
}

/** Every account found in the credential files of `home` and of the CLIs' folder overrides in `env`. */
export async function readCredentialFiles(home = userHome(), env: NodeJS.ProcessEnv = process.env): Promise<CredentialSource[]> {
  const found = await Promise.all(credentialFiles(home, env).map(readLocatedFile));
  return found.flat();
}
