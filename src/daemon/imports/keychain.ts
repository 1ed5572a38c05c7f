/**
 * Reads the subscription CLIs' items from the OS credential store by running the platform's own tool:
 * macOS `security`, Linux Secret Service `secret-tool`, Windows PowerShell (Credential Manager through
 * CredEnumerate). Programs run with execa: no shell, fixed arguments, a timeout, bounded output. A missing
 * tool, a locked store or an item in an unknown format yields no account, never an error.
 */

import { createHash } from 'node:crypto';
import { parseClaudeCode, parseCodex, parseGeminiCli, type ParsedAccount } from './formats.js';
import type { CredentialSource } from './sources.js';

type KeychainService = { service: string; parse: (doc: unknown) => ParsedAccount[] };

/** Keychain services of the CLIs and how their secret reads. */
export const KEYCHAIN_SERVICES: readonly KeychainService[] = [
  { service: 'Claude Code-credentials', parse: parseClaudeCode },
  { service: 'Codex Auth', parse: parseCodex },
  { service: 'gemini-cli-oauth', parse: parseGeminiCli },
];

/**
 * The Keychain item Claude Code uses when `CLAUDE_CONFIG_DIR` is set: `Claude Code-credentials-` and the first
 * 8 hex digits of the SHA-256 of the variable's value as given (cli.js of @anthropic-ai/claude-code 2.0.77:
 * `"Claude Code" + OAUTH_FILE_SUFFIX + "-credentials" + (CLAUDE_CONFIG_DIR ? "-" + sha256(configDir).slice(0, 8) : "")`).
 * Codex needs nothing of the kind: its keyring items all share the service `Codex Auth` (the account names
 * the CODEX_HOME), and every item of a service is read.
 */
export function claudeConfigDirService(configDir: string): string {
  return `Claude Code-credentials-${createHash('sha256').update(configDir).digest('hex').slice(0, 8)}`;
}

/** The services to read: the CLIs' own, and Claude Code's per-folder item when `CLAUDE_CONFIG_DIR` is set. */
export function keychainServices(env: NodeJS.ProcessEnv = process.env): KeychainService[] {
  const dir = env.CLAUDE_CONFIG_DIR;
  return dir ? [...KEYCHAIN_SERVICES, { service: claudeConfigDirService(dir), parse: parseClaudeCode }] : [...KEYCHAIN_SERVICES];
}

export type KeychainBackend = 'macos' | 'secret-service' | 'windows' | 'none';

const TIMEOUT_MS = 5000;
const MAX_OUTPUT = 1024 * 1024;

/** The platform's store; `ROUTER_KEYCHAIN_BACKEND` overrides it (tests, or `none` to turn it off). */
export function keychainBackend(env: NodeJS.ProcessEnv = process.env, platform = process.platform): KeychainBackend {
  const forced = env.ROUTER_KEYCHAIN_BACKEND;
  if (forced === 'macos' || forced === 'secret-service' || forced === 'windows' || forced === 'none') return forced;
  return platform === 'darwin' ? 'macos' : platform === 'win32' ? 'windows' : platform === 'linux' ? 'secret-service' : 'none';
}

/** Runs a program without a shell; its stdout, or undefined when it is missing, fails or times out. */
async function run(file: string, args: string[]): Promise<string | undefined> {
  try {
    // Loaded on the first keychain read (execa weighs about 5 MB; most daemons never read a keychain).
    const { execa } = await import('execa');
    const r = await execa(file, args, { timeout: TIMEOUT_MS, reject: false, stdin: 'ignore', maxBuffer: MAX_OUTPUT, stripFinalNewline: true });
    return r.exitCode === 0 && !r.timedOut ? String(r.stdout) : undefined;
  } catch {
    return undefined;
  }
}

function toSources(services: readonly KeychainService[], service: string, account: string, secret: string): CredentialSource[] {
  const known = services.find((k) => k.service === service);
  if (!known) return [];
  try {
    return known.parse(JSON.parse(secret)).map((parsed) => ({ service, account, kind: 'keychain' as const, parsed }));
  } catch {
    return [];
  }
}

/** macOS: the item's attributes name its account (`"acct"<blob>="..."`), then `-w` prints its secret. */
async function readMacos(services: readonly KeychainService[]): Promise<CredentialSource[]> {
  const out: CredentialSource[] = [];
  for (const { service } of services) {
    const attrs = await run('security', ['find-generic-password', '-s', service]);
    if (attrs === undefined) continue;
    const account = /"acct"<blob>="([^"]*)"/.exec(attrs)?.[1] ?? '';
    const secret = await run('security', ['find-generic-password', '-s', service, ...(account ? ['-a', account] : []), '-w']);
    if (secret) out.push(...toSources(services, service, account || 'default', secret));
  }
  return out;
}

/** Parses `secret-tool search --all` output: blocks of `key = value` lines, one block per item. */
export function parseSecretToolOutput(text: string): Array<Record<string, string>> {
  const items: Array<Record<string, string>> = [];
  let cur: Record<string, string> | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('[')) {
      cur = {};
      items.push(cur);
      continue;
    }
    const at = line.indexOf(' = ');
    if (cur && at > 0) cur[line.slice(0, at)] = line.slice(at + 3);
  }
  return items;
}

/** Linux: Secret Service items carry `service` and `account` (keytar) or `username` (keyring-rs) attributes. */
async function readSecretService(services: readonly KeychainService[]): Promise<CredentialSource[]> {
  const out: CredentialSource[] = [];
  for (const { service } of services) {
    const text = await run('secret-tool', ['search', '--all', 'service', service]);
    if (!text) continue;
    for (const item of parseSecretToolOutput(text)) {
      const account = item['attribute.account'] ?? item['attribute.username'] ?? 'default';
      if (item.secret) out.push(...toSources(services, service, account, item.secret));
    }
  }
  return out;
}

/** Lists generic credentials with CredEnumerate and prints one JSON line per item: target, user, blob (base64). */
const WINDOWS_SCRIPT = `
$ErrorActionPreference = 'Stop'
Add-Type -TypeDefinition @'
using System; using System.Runtime.InteropServices;
public static class RouterCredList {
  [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Unicode)]
  public struct CREDENTIAL { public int Flags; public int Type; public string TargetName; public string Comment;
    public System.Runtime.InteropServices.ComTypes.FILETIME LastWritten; public int CredentialBlobSize; public IntPtr CredentialBlob;
    public int Persist; public int AttributeCount; public IntPtr Attributes; public string TargetAlias; public string UserName; }
  [DllImport("advapi32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
  public static extern bool CredEnumerate(string filter, int flags, out int count, out IntPtr creds);
  [DllImport("advapi32.dll")] public static extern void CredFree(IntPtr p);
  public static void Print(string filter) {
    int count; IntPtr list;
    if (!CredEnumerate(filter, 0, out count, out list)) return;
    try {
      for (int i = 0; i < count; i++) {
        IntPtr p = Marshal.ReadIntPtr(list, i * IntPtr.Size);
        CREDENTIAL c = (CREDENTIAL)Marshal.PtrToStructure(p, typeof(CREDENTIAL));
        byte[] blob = new byte[c.CredentialBlobSize];
        if (c.CredentialBlobSize > 0) Marshal.Copy(c.CredentialBlob, blob, 0, c.CredentialBlobSize);
        Console.WriteLine("{\\"target\\":\\"" + Convert.ToBase64String(System.Text.Encoding.UTF8.GetBytes(c.TargetName ?? "")) +
          "\\",\\"user\\":\\"" + Convert.ToBase64String(System.Text.Encoding.UTF8.GetBytes(c.UserName ?? "")) +
          "\\",\\"blob\\":\\"" + Convert.ToBase64String(blob) + "\\"}");
      }
    } finally { CredFree(list); }
  }
}
'@
${KEYCHAIN_SERVICES.map(({ service }) => `[RouterCredList]::Print('*${service}*')`).join('\n')}
`;

/** A Credential Manager blob: UTF-8 (keytar) or UTF-16LE (keyring-rs) text. */
function decodeBlob(blob: Buffer): string {
  // JSON text starts with an ASCII character: in UTF-16LE its second byte is 0, in UTF-8 never.
  return blob.length >= 2 && blob[1] === 0 ? blob.toString('utf16le') : blob.toString('utf8');
}

/** Windows: generic credentials whose target names one of the services (`service/account` or `account.service`). */
async function readWindows(): Promise<CredentialSource[]> {
  const text = await run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', WINDOWS_SCRIPT]);
  if (!text) return [];
  const out: CredentialSource[] = [];
  for (const line of text.split(/\r?\n/)) {
    let row: { target?: string; user?: string; blob?: string };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    const target = Buffer.from(row.target ?? '', 'base64').toString('utf8');
    const known = KEYCHAIN_SERVICES.find((k) => target.includes(k.service));
    if (!known || !row.blob) continue;
    const account = Buffer.from(row.user ?? '', 'base64').toString('utf8') || 'default';
    out.push(...toSources(KEYCHAIN_SERVICES, known.service, account, decodeBlob(Buffer.from(row.blob, 'base64'))));
  }
  return out;
}

/** Every CLI account in the OS credential store of this machine. */
export async function readKeychain(backend = keychainBackend(), env: NodeJS.ProcessEnv = process.env): Promise<CredentialSource[]> {
  switch (backend) {
    case 'macos':
      return readMacos(keychainServices(env));
    case 'secret-service':
      return readSecretService(keychainServices(env));
    case 'windows':
      return readWindows();
    default:
      return [];
  }
}
