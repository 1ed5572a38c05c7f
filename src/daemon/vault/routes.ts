import { z } from 'zod';
import { badRequest } from '../http/errors.js';
import { NO_CONTENT, rawReply } from '../http/replies.js';
import { type Method, noContent, route, type RouteDef } from '../http/routes.js';
import { deleteCredentials, loadCredentials, saveCredentials } from './credentials.js';
import { WEBDAV_PREFIX } from './notes.js';
import { handleWebdav, VAULT_MAX_NOTE_BYTES, WEBDAV_METHODS, type WebdavMethod } from './webdav.js';

const credentialsBody = z
  .object({
    username: z.string().min(1).max(200).regex(/^[^:\u0000-\u001f]+$/, 'no colon or control characters (Basic authentication)'),
    /** Omitted: keep the stored password (to rename the user or switch the vault on or off). */
    password: z.string().min(8).max(1000).optional(),
    enabled: z.boolean().default(true),
  })
  .strict();

/** The credentials as replies show them: never the password. */
function publicView(creds: ReturnType<typeof loadCredentials>) {
  return creds ? { username: creds.username, enabled: creds.enabled, passwordSet: true } : { username: null, enabled: false, passwordSet: false };
}

const credentialsReply = z.object({ username: z.string().nullable(), enabled: z.boolean(), passwordSet: z.boolean() }) satisfies z.ZodType<ReturnType<typeof publicView>>;

/**
 * What each WebDAV method answers when it succeeds (webdav.ts): PROPFIND a 207 multistatus document, GET
 * the note as Markdown, the others no body (PUT 201 for a new note, 204 for an update; MOVE 201 or 204;
 * MKCOL is always refused: the folders are the memory types).
 */
const WEBDAV_REPLIES: Record<WebdavMethod, { status: number; reply: z.ZodType }> = {
  OPTIONS: { status: 200, reply: NO_CONTENT },
  PROPFIND: { status: 207, reply: rawReply('application/xml') },
  GET: { status: 200, reply: rawReply('text/markdown') },
  PUT: { status: 201, reply: NO_CONTENT },
  DELETE: { status: 204, reply: NO_CONTENT },
  MKCOL: { status: 201, reply: NO_CONTENT },
  MOVE: { status: 201, reply: NO_CONTENT },
};

const SETTINGS_PATH = '/api/settings/obsidian/webdav';

/**
 * The note vault (docs/vault.md): its credentials (management) and the WebDAV server. The WebDAV routes
 * are public to the tier check because they carry their own Basic credentials (checked in webdav.ts);
 * the browser guard still runs (Host, Origin), and raw bodies skip the JSON layer.
 */
export const vaultRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: SETTINGS_PATH,
    tier: 'management',
    tag: 'vault',
    summary: 'Note-vault WebDAV credentials (username, enabled, passwordSet; never the password)',
    reply: credentialsReply,
    handler: ({ services }) => publicView(loadCredentials(services)),
  }),
  route({
    method: 'POST',
    path: SETTINGS_PATH,
    tier: 'management',
    tag: 'vault',
    summary: 'Set the note-vault WebDAV credentials (stored encrypted) and switch the vault on or off',
    body: credentialsBody,
    reply: credentialsReply,
    handler: async ({ services, body }) => {
      const current = loadCredentials(services);
      const password = body.password ?? current?.password;
      if (password === undefined) throw badRequest("Invalid field 'password': required when no password is set", 'password');
      await saveCredentials(services, { username: body.username, password, enabled: body.enabled });
      return publicView(loadCredentials(services));
    },
  }),
  route({
    method: 'DELETE',
    path: SETTINGS_PATH,
    tier: 'management',
    tag: 'vault',
    summary: 'Remove the note-vault credentials (the WebDAV server answers 404 afterwards)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services }) => {
      await deleteCredentials(services);
      return noContent();
    },
  }),
  ...[WEBDAV_PREFIX, `${WEBDAV_PREFIX}/**`].flatMap((path) =>
    WEBDAV_METHODS.map((method) =>
      route({
        method: method as Method,
        path,
        tier: 'public',
        tag: 'vault',
        summary: `WebDAV ${method} on the note vault (Basic authentication with the vault credentials)`,
        rawBody: true,
        bodyLimit: VAULT_MAX_NOTE_BYTES,
        ...WEBDAV_REPLIES[method],
        handler: ({ event, services }) => handleWebdav(event, services, method),
      }),
    ),
  ),
];
