/**
 * Credential import routes: Antigravity token files (`/api/providers/agy-auth/*`) and the two-step import
 * of the CLIs' logins found on this machine (`/api/providers/keychain/*`). Routes that read this machine's
 * credential files or run its credential-store tools are in the spawn tier (loopback only, never a
 * manage-scope key): a remote caller must not be able to lift the owner's logins.
 */

import { timingSafeEqual } from 'node:crypto';
import { posix } from 'node:path';
import { z } from 'zod';
import type {
  DiscoverReply,
  EnvImportReply,
  DiscoveredAccount,
  ImportedConnectionSummary,
  KeychainImportReply,
  TokenImportReply,
} from '../../shared/imports.js';
import { extractZip } from '../archive/unzip.js';
import { readBodyBytes } from '../http/body.js';
import { badRequest, RouterError } from '../http/errors.js';
import { mediaTypeEssence } from '../http/request-guard.js';
import { discoverReply, envImportReply, keychainImportReply, tokenImportReply } from '../providers/replies.js';
import { json, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { fileOrigin, fingerprint, type ImportedConnection, importAccount, providerKnown } from './apply.js';
import { parseAntigravity, type ParsedAccount } from './formats.js';
import { importEnvCredentials } from './env.js';
import { readKeychain } from './keychain.js';
import { AGY_TOKEN_FILE, type CredentialSource, readCredentialFiles, readKnownFile, userHome } from './sources.js';

const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'] as const;
const ZIP_LIMITS = { maxBytes: 16 * 1024 * 1024, maxEntries: 200, maxEntryBytes: 256 * 1024 };
const MAX_ZIP_BYTES = 10 * 1024 * 1024;
const MAX_BULK = 100;

const tokenFile = z.record(z.string().max(100), z.unknown());
const bulkBody = z.object({ files: z.array(tokenFile).min(1).max(MAX_BULK) }).strict();
const confirmed = z.object({ service: z.string().min(1).max(300), account: z.string().min(1).max(300), fingerprint: z.string().min(1).max(100) }).strict();
const keychainImportBody = z.object({ confirmedAccounts: z.array(confirmed).min(1).max(100).optional() }).strict();
const envCredential = z
  .object({
    variable: z.string().regex(/^[A-Z][A-Z0-9_]{0,99}$/, 'an environment variable name'),
    provider: z.string().min(1).max(200),
    apiKey: z.string().min(1).max(8192),
    baseUrl: z.string().max(2000).url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL').optional(),
  })
  .strict();
const envImportBody = z.object({ credentials: z.array(envCredential).min(1).max(50), dryRun: z.boolean().optional() }).strict();

function summary(c: ImportedConnection): ImportedConnectionSummary {
  return { id: c.id, provider: c.provider, name: c.name, created: c.created, expiresAt: c.expiresAt };
}

/** The 201 reply of the token-file routes (a connection was made or refreshed). */
const created = (reply: TokenImportReply): Response => json(201, reply);

/** Refuses before anything is stored when this router has no Antigravity provider. */
function requireAntigravity(services: Services): void {
  if (!providerKnown(services, 'antigravity')) throw new RouterError(400, "Provider 'antigravity' is not available in this router.");
}

/** Parses every token file first, so one bad file imports nothing (the error names it). */
function parseAll(files: Array<{ name: string; doc: unknown }>): ParsedAccount[] {
  return files.flatMap(({ name, doc }) => {
    try {
      return parseAntigravity(doc);
    } catch (err) {
      throw badRequest(`${name}: ${(err as Error).message}`, 'files');
    }
  });
}

/** One after another, in file order (two files of one account update one connection). */
async function importFiles(services: Services, parsed: ParsedAccount[]): Promise<ImportedConnectionSummary[]> {
  const out: ImportedConnectionSummary[] = [];
  for (const p of parsed) out.push(summary(await importAccount(services, p, fileOrigin(services, p))));
  return out;
}

/** Token files inside an archive: `*.json` and files named like the CLI's own token file. */
function isTokenFileName(path: string): boolean {
  const base = posix.basename(path);
  return !base.startsWith('.') && (base.endsWith('.json') || base === posix.basename(AGY_TOKEN_FILE));
}

function parseArchiveEntry(path: string, data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    throw badRequest(`Archive entry "${path}" is not a JSON token file.`);
  }
}

/** Everything importable on this machine: the CLIs' credential files, then the OS credential store. */
async function discoverSources(): Promise<CredentialSource[]> {
  const [files, keychain] = await Promise.all([readCredentialFiles(), readKeychain()]);
  return [...files, ...keychain];
}

function listed(services: Services, s: CredentialSource): DiscoveredAccount {
  return {
    service: s.service,
    account: s.account,
    fingerprint: fingerprint(services, s.service, s.account, s.parsed),
    provider: s.parsed.provider,
    kind: s.kind,
    expiresAt: s.parsed.expiresAt ?? null,
    importable: providerKnown(services, s.parsed.provider),
  };
}

/** Imports the confirmed accounts whose fingerprint still matches what the store holds now. */
async function importConfirmed(services: Services, wanted: Array<{ service: string; account: string; fingerprint: string }>): Promise<KeychainImportReply> {
  const current = await discoverSources();
  const reply: KeychainImportReply = { imported: [], skipped: [] };
  for (const want of wanted) {
    const match = current.find((s) => s.service === want.service && s.account === want.account);
    const skip = (reason: 'changed' | 'not_found' | 'unsupported') => reply.skipped.push({ service: want.service, account: want.account, reason });
    if (!match) skip('not_found');
    else if (!constantTimeEqual(listed(services, match).fingerprint, want.fingerprint)) skip('changed');
    else if (!providerKnown(services, match.parsed.provider)) skip('unsupported');
    else reply.imported.push({ service: want.service, account: want.account, connection: summary(await importAccount(services, match.parsed, `${match.service}:${match.account}`)) });
  }
  return reply;
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Routes of credential import. */
export const importRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/providers/env/import',
    tier: 'management',
    tag: 'providers',
    summary: 'Import provider API keys found in the environment (`router setup`): one connection per variable, kept when unchanged; each tested against its upstream; dryRun: say what would change',
    body: envImportBody,
    reply: envImportReply,
    handler: async ({ services, body }): Promise<EnvImportReply> => ({ results: await importEnvCredentials(services, body.credentials, body.dryRun ?? false) }),
  }),
  route({
    method: 'POST',
    path: '/api/providers/agy-auth/import',
    tier: 'management',
    tag: 'providers',
    summary: 'Import one Antigravity token file (the file\'s JSON as the body) as an antigravity connection',
    body: tokenFile,
    status: 201,
    reply: tokenImportReply,
    handler: async ({ services, body }): Promise<Response> => {
      const parsed = parseAll([{ name: 'token file', doc: body }]);
      requireAntigravity(services);
      return created({ imported: await importFiles(services, parsed) });
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/agy-auth/import-bulk',
    tier: 'management',
    tag: 'providers',
    summary: `Import several Antigravity token files ({files: [...]}, at most ${MAX_BULK}); one invalid file imports nothing`,
    body: bulkBody,
    status: 201,
    reply: tokenImportReply,
    handler: async ({ services, body }): Promise<Response> => {
      const parsed = parseAll(body.files.map((doc, i) => ({ name: `files[${i}]`, doc })));
      requireAntigravity(services);
      return created({ imported: await importFiles(services, parsed) });
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/agy-auth/zip-extract',
    tier: 'management',
    tag: 'providers',
    summary: 'Import the Antigravity token files of a zip archive (the archive as the body); unsafe or oversized archives are refused',
    rawBody: true,
    bodyTypes: ZIP_TYPES,
    bodyLimit: MAX_ZIP_BYTES,
    status: 201,
    reply: tokenImportReply,
    handler: async ({ services, event }): Promise<Response> => {
      if (!(ZIP_TYPES as readonly string[]).includes(mediaTypeEssence(event.req.headers.get('content-type')))) {
        throw new RouterError(415, `Content-Type must be ${ZIP_TYPES.join(' or ')}: the body is the archive.`);
      }
      const entries = extractZip(await readBodyBytes(event, MAX_ZIP_BYTES), ZIP_LIMITS);
      const tokens = entries.filter((e) => isTokenFileName(e.path));
      if (tokens.length === 0) throw badRequest('The archive holds no token files (*.json).');
      const parsed = parseAll(tokens.map((e) => ({ name: e.path, doc: parseArchiveEntry(e.path, e.data) })));
      requireAntigravity(services);
      return created({ imported: await importFiles(services, parsed), ignored: entries.filter((e) => !isTokenFileName(e.path)).map((e) => e.path) });
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/agy-auth/apply-local',
    tier: 'spawn',
    tag: 'providers',
    summary: `Import the local Antigravity CLI login (~/${AGY_TOKEN_FILE}); loopback only`,
    status: 201,
    reply: tokenImportReply,
    handler: async ({ services }): Promise<Response> => {
      const found = await readKnownFile(userHome(), { path: AGY_TOKEN_FILE, parse: parseAntigravity });
      if (found.length === 0) throw new RouterError(404, `No Antigravity CLI login found (~/${AGY_TOKEN_FILE}); sign in with agy first.`);
      requireAntigravity(services);
      const imported: ImportedConnectionSummary[] = [];
      for (const s of found) imported.push(summary(await importAccount(services, s.parsed, `${s.service}:${s.account}`)));
      return created({ imported });
    },
  }),
  route({
    method: 'POST',
    path: '/api/providers/keychain/discover',
    tier: 'spawn',
    tag: 'providers',
    summary: 'List CLI logins importable from this machine (OS credential store and CLI credential files) with fingerprints; loopback only',
    reply: discoverReply,
    handler: async ({ services }): Promise<DiscoverReply> => ({ accounts: (await discoverSources()).map((s) => listed(services, s)) }),
  }),
  route({
    method: 'POST',
    path: '/api/providers/keychain/import',
    tier: 'spawn',
    tag: 'providers',
    summary: 'Import confirmed accounts ({confirmedAccounts: [{service, account, fingerprint}]}); the store is re-read and only unchanged fingerprints import',
    body: keychainImportBody,
    reply: keychainImportReply,
    handler: async ({ services, body }): Promise<KeychainImportReply> => {
      if (body.confirmedAccounts) return importConfirmed(services, body.confirmedAccounts);
      if (!services.settings.get().keychainLegacyImport) {
        throw badRequest('confirmedAccounts is required: call POST /api/providers/keychain/discover, then confirm accounts.', 'confirmedAccounts');
      }
      // Versioning 5: the single-step import survives only behind its opt-in and is on its way out.
      services.log.warn('deprecated: single-step keychain import (setting keychainLegacyImport); use discover + confirmedAccounts');
      const all = (await discoverSources()).map((s) => listed(services, s));
      const reply = await importConfirmed(services, all.filter((a) => a.importable));
      return { ...reply, deprecated: 'Single-step keychain import is deprecated and will be removed; use discover, then import with confirmedAccounts.' };
    },
  }),
];
