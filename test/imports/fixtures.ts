/**
 * Fake credential stores for import tests: a temp HOME with the CLIs' credential files, and fake `security`
 * (macOS) and `secret-tool` (Linux Secret Service) programs in a temp bin folder prepended to the daemon's
 * PATH. The fakes answer from files in a folder the test controls (one file per keychain service), so a
 * test can change an item between discovery and import, and they log every argv they get.
 */

import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { deriveCliToken } from '../../src/shared/cli-token.js';
import type { RouterProcess } from '../support/router-daemon.js';

export interface FakeMachine {
  /** The temp HOME (credential files live under it). */
  home: string;
  /** Folder with the fake programs; prepend to PATH. */
  bin: string;
  /** Env for the daemon under test. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Writes a credential file under HOME (relative path). */
  writeFile(rel: string, doc: unknown): void;
  /** Sets a keychain item (service -> account + JSON secret); the fakes serve it. */
  setItem(service: string, account: string, secret: unknown): void;
  /** argv lines the fakes were called with. */
  calls(): string[];
}

const SECURITY = `#!/bin/sh
# Fake macOS security: find-generic-password -s SERVICE [-a ACCOUNT] [-w]
echo "security $*" >> "$STORE/calls.log"
svc=""; want_secret=0
while [ $# -gt 0 ]; do
  case "$1" in
    -s) svc="$2"; shift ;;
    -w) want_secret=1 ;;
  esac
  shift
done
[ -f "$STORE/$svc.secret" ] || { echo "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain." >&2; exit 44; }
if [ "$want_secret" = 1 ]; then cat "$STORE/$svc.secret"; echo; exit 0; fi
echo 'keychain: "/Users/test/Library/Keychains/login.keychain-db"'
echo 'class: "genp"'
echo 'attributes:'
printf '    "acct"<blob>="%s"\\n' "$(cat "$STORE/$svc.account")"
printf '    "svce"<blob>="%s"\\n' "$svc"
`;

const SECRET_TOOL = `#!/bin/sh
# Fake secret-tool: search --all service SERVICE
echo "secret-tool $*" >> "$STORE/calls.log"
svc="$4"
[ "$1" = search ] && [ "$2" = --all ] && [ "$3" = service ] || exit 2
[ -f "$STORE/$svc.secret" ] || exit 1
echo "[/org/freedesktop/secrets/collection/login/7]"
echo "label = $svc"
echo "secret = $(cat "$STORE/$svc.secret")"
echo "created = 2026-01-01 10:00:00"
echo "modified = 2026-01-01 10:00:00"
echo "schema = org.freedesktop.Secret.Generic"
echo "attribute.service = $svc"
echo "attribute.account = $(cat "$STORE/$svc.account")"
`;

export function fakeMachine(): FakeMachine {
  const root = mkdtempSync(join(tmpdir(), 'router-import-'));
  const home = join(root, 'home');
  const bin = join(root, 'bin');
  const store = join(root, 'store');
  for (const d of [home, bin, store]) mkdirSync(d, { recursive: true });
  for (const [name, script] of [['security', SECURITY], ['secret-tool', SECRET_TOOL]] as const) {
    writeFileSync(join(bin, name), script);
    chmodSync(join(bin, name), 0o755);
  }
  writeFileSync(join(store, 'calls.log'), '');
  return {
    home,
    bin,
    env: (extra = {}) => ({ HOME: home, PATH: `${bin}:${process.env.PATH}`, STORE: store, ...extra }),
    writeFile(rel, doc) {
      const file = join(home, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc), { mode: 0o600 });
    },
    setItem(service, account, secret) {
      writeFileSync(join(store, `${service}.account`), account);
      writeFileSync(join(store, `${service}.secret`), JSON.stringify(secret));
    },
    calls: () => readFileSync(join(store, 'calls.log'), 'utf8').split('\n').filter(Boolean),
  };
}

/** An unsigned JWT with the given claims (the import reads labels from id tokens; nothing verifies them). */
export function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.sig`;
}

export const claudeFile = (accessToken: string, refreshToken = 'sk-ant-ort01-file') => ({
  claudeAiOauth: { accessToken, refreshToken, expiresAt: Date.now() + 3_600_000, scopes: ['user:inference'], subscriptionType: 'max' },
});

export const codexFile = (accessToken: string, email = 'dev@example.com') => ({
  OPENAI_API_KEY: null,
  tokens: {
    id_token: jwt({ email, 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-123', chatgpt_plan_type: 'pro' } }),
    access_token: accessToken,
    refresh_token: 'rt-codex-file',
    account_id: 'acct-123',
  },
  last_refresh: '2026-01-01T00:00:00Z',
});

/**
 * Management calls to a daemon that runs with the fake HOME: the CLI token is machine-derived (the home
 * folder is part of it), so it is derived here as that daemon derives it.
 */
export function manageAs(router: RouterProcess, machine: FakeMachine) {
  const prev = process.env.HOME;
  process.env.HOME = machine.home;
  let token: string;
  try {
    token = deriveCliToken(join(router.home, 'cli-token.salt'))!;
  } finally {
    process.env.HOME = prev;
  }
  return async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${router.url}${path}`, {
      method,
      headers: { 'x-router-cli-token': token, ...(body !== undefined || method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
}
