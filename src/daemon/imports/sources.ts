/**
 * Where importable accounts live on this machine: the CLIs' own credential files under the user's home
 * folder. Every read is bounded (size) and a file that is absent, unreadable or not in the expected format
 * is skipped: discovery reports what it can import, never why a stranger's file was odd.
 */

import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
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

/** The accounts of one known file, or [] when it is absent or not in its format. */
export async function readKnownFile(home: string, known: KnownFile): Promise<CredentialSource[]> {
  const doc = await readJsonFile(join(home, ...known.path.split('/')));
  if (doc === undefined) return [];
  let parsed: ParsedAccount[];
  try {
    parsed = known.parse(doc);
  } catch {
    return [];
  }
  return parsed.map((p) => ({ service: `~/${known.path}`, account: p.label, kind: 'file' as const, parsed: p }));
}

/** Every account found in the known credential files of `home`. */
export async function readCredentialFiles(home = userHome()): Promise<CredentialSource[]> {
  const found = await Promise.all(KNOWN_FILES.map((known) => readKnownFile(home, known)));
  return found.flat();
}
