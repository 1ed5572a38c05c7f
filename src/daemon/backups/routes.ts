import { createReadStream, createWriteStream, renameSync, statSync } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { BACKUP_PASSPHRASE_HEADER, type BackupRecord, type ImportReply } from '../../shared/wire.js';
import { HEADER } from '../../shared/headers.js';
import { badRequest, RouterError } from '../http/errors.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import { isoTime, NO_CONTENT, rawReply } from '../http/replies.js';
import { mediaTypeEssence } from '../http/request-guard.js';
import type { Services } from '../services.js';
import { buildExport, prepareImport } from './archive.js';
import { MIN_PASSPHRASE_LENGTH } from './keywrap.js';
import { removeQuietly } from './store.js';

/** Media types the import route takes: the file as the body (no multipart: one file, nothing else). */
export const IMPORT_TYPES = ['application/octet-stream', 'application/vnd.sqlite3', 'application/x-sqlite3'] as const;
/** Largest database an import accepts (it streams to disk, never into memory). */
export const MAX_IMPORT_BYTES = 4 * 1024 ** 3;

const passphrase = z.string().min(MIN_PASSPHRASE_LENGTH, `a passphrase has at least ${MIN_PASSPHRASE_LENGTH} characters`).max(1024);
const exportBody = z.object({ passphrase: passphrase.optional() }).strict();

function backupsOf(services: Services) {
  return services.backups;
}

/** A consistent export of the live database (batched rows written first) in a scratch file. */
async function exportFile(services: Services, passphrase?: string): Promise<string> {
  await services.backups.flush();
  return buildExport(services.db, services.backups.store, { version: services.version, keyFile: services.paths.secretKey, passphrase });
}

/** Sends a scratch file as the download and removes it once sent (or abandoned). */
function download(file: string, services: Services): Response {
  const size = statSync(file).size;
  const stream = createReadStream(file);
  stream.once('close', () => removeQuietly(file));
  const name = `router-export-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}.db`;
  return new Response(Readable.toWeb(stream) as ReadableStream, {
    headers: {
      'content-type': 'application/vnd.sqlite3',
      'content-length': String(size),
      'content-disposition': `attachment; filename="${name}"`,
      [HEADER.version]: services.version,
    },
  });
}

/** Streams the request body to `file`, refusing (413) past `limit` bytes. */
async function receive(services: Services, event: Parameters<RouteDef['handler']>[0]['event'], file: string, limit: number): Promise<number> {
  const nodeReq = event.req.runtime?.node?.req;
  const source = nodeReq ?? (event.req.body ? Readable.fromWeb(event.req.body as import('node:stream/web').ReadableStream) : undefined);
  if (!source) throw badRequest('The request has no body: send the database file as the body.');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > limit) done(new RouterError(413, `The upload exceeds the limit of ${limit} bytes.`));
      else done(null, chunk);
    },
  });
  await pipeline(source, counter, createWriteStream(file, { mode: 0o600 }));
  if (size === 0) throw badRequest('The request body is empty: send the database file as the body.');
  services.log.info('database import received', { size });
  return size;
}

/** The passphrase header: URI-encoded by the CLI, so any Unicode passphrase survives a header. */
function passphraseOf(event: Parameters<RouteDef['handler']>[0]['event']): string | undefined {
  const raw = event.req.headers.get(BACKUP_PASSPHRASE_HEADER);
  if (raw === null || raw === '') return undefined;
  let value = raw;
  try {
    value = decodeURIComponent(raw);
  } catch {
    // not encoded: taken as is
  }
  const ok = passphrase.safeParse(value);
  if (!ok.success) throw badRequest(`Invalid header '${BACKUP_PASSPHRASE_HEADER}': ${ok.error.issues[0]!.message}`, BACKUP_PASSPHRASE_HEADER);
  return value;
}

/** Database backups, export and import (docs/operations.md). */
export const backupReply = z.object({
  id: z.string(),
  createdAt: isoTime,
  size: z.number(),
  reason: z.enum(['manual', 'daily', 'pre-migration', 'pre-import']),
}) satisfies z.ZodType<BackupRecord>;
const importReply = z.object({
  ok: z.literal(true),
  safetyBackup: backupReply,
  fromMigration: z.number(),
  migration: z.number(),
  secrets: z.object({ kept: z.number(), reencrypted: z.number(), needReentry: z.number() }),
  restarting: z.literal(true),
}) satisfies z.ZodType<ImportReply>;
/** The export: a SQLite database file (its secrets sealed under the passphrase, when one is given). */
const exportReply = rawReply('application/vnd.sqlite3');

export const backupRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/db-backups',
    tier: 'management',
    tag: 'backups',
    summary: 'List database backups in the state folder (id, createdAt, size, reason), newest first',
    reply: z.object({ backups: z.array(backupReply) }),
    handler: ({ services }) => ({ backups: backupsOf(services).list() }),
  }),
  route({
    method: 'POST',
    path: '/api/db-backups',
    tier: 'management',
    tag: 'backups',
    summary: 'Back up the database now (online and consistent while the daemon serves)',
    status: 201,
    reply: backupReply,
    handler: async ({ services }) => json(201, await backupsOf(services).create('manual')),
  }),
  route({
    method: 'DELETE',
    path: '/api/db-backups/:id',
    tier: 'management',
    tag: 'backups',
    summary: 'Remove one backup',
    status: 204,
    reply: NO_CONTENT,
    handler: ({ services, params }) => {
      if (!backupsOf(services).store.remove(params.id ?? '')) throw new RouterError(404, 'Backup not found.');
      return noContent();
    },
  }),
  route({
    method: 'GET',
    path: '/api/db-backups/export',
    sideEffects: true,
    tier: 'management',
    tag: 'backups',
    summary: 'Download a consistent snapshot of the database as one SQLite file (secrets stay encrypted; no key)',
    reply: exportReply,
    handler: async ({ services }) => download(await exportFile(services), services),
  }),
  route({
    method: 'POST',
    path: '/api/db-backups/export',
    tier: 'local',
    tag: 'backups',
    summary: 'Download a snapshot; with a passphrase it carries the secret key, wrapped with it (scrypt + AES-GCM)',
    body: exportBody,
    reply: exportReply,
    handler: async ({ services, body }) => download(await exportFile(services, body.passphrase), services),
  }),
  route({
    method: 'POST',
    path: '/api/db-backups/import',
    tier: 'local',
    tag: 'backups',
    summary:
      'Replace the database with an uploaded export or backup (the file as the body); validated, a safety backup first, applied atomically, then the daemon restarts',
    rawBody: true,
    bodyTypes: IMPORT_TYPES,
    bodyLimit: MAX_IMPORT_BYTES,
    reply: importReply,
    handler: async ({ services, event }): Promise<ImportReply> => {
      if (!(IMPORT_TYPES as readonly string[]).includes(mediaTypeEssence(event.req.headers.get('content-type')))) {
        throw new RouterError(415, `Content-Type must be ${IMPORT_TYPES.join(' or ')}: the body is the database file.`);
      }
      const pass = passphraseOf(event);
      const backups = backupsOf(services);
      if (backups.importing) throw new RouterError(409, 'Another import is being applied.');
      backups.importing = true;
      const upload = backups.store.scratch('import');
      try {
        await receive(services, event, upload, MAX_IMPORT_BYTES);
        const prepared = await prepareImport(upload, { keyFile: services.paths.secretKey, passphrase: pass, migrationsDir: backups.migrationsDir });
        const safetyBackup = await backups.create('pre-import');
        const target = services.paths.db;
        // Applied between the old database's close and the new daemon's start: one rename, atomic.
        services.requestRestart('database import', () => {
          removeQuietly(`${target}-wal`);
          removeQuietly(`${target}-shm`);
          renameSync(upload, target);
        });
        services.log.info('database import validated; restarting to apply it', { safetyBackup: safetyBackup.id, ...prepared.secrets });
        return { ok: true, safetyBackup, fromMigration: prepared.fromMigration, migration: prepared.migration, secrets: prepared.secrets, restarting: true };
      } catch (err) {
        removeQuietly(upload);
        backups.importing = false;
        throw err;
      }
    },
  }),
];
