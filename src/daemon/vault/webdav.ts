import type { H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { VERSION } from '../../shared/version.js';
import { remoteAddressOf } from '../auth/pipeline.js';
import { FailureThrottle } from '../auth/throttle.js';
import { readBodyBytes } from '../http/body.js';
import { badRequest, RouterError } from '../http/errors.js';
import { MEMORY_TYPES, type MemoryType } from '../memory/types.js';
import type { Services } from '../services.js';
import { basicAuthOk, loadCredentials } from './credentials.js';
import { etagOf, findNote, isIdName, keyFromName, type Note, noteMetadata, notesOf, parseNote, parseVaultPath, renderNote, type VaultPath, WEBDAV_PREFIX } from './notes.js';

/** Largest note a PUT takes (413 past it). */
export const VAULT_MAX_NOTE_BYTES = 1024 * 1024;
export const WEBDAV_METHODS = ['OPTIONS', 'PROPFIND', 'GET', 'PUT', 'DELETE', 'MKCOL', 'MOVE'] as const;
export type WebdavMethod = (typeof WEBDAV_METHODS)[number];

const ALLOW = WEBDAV_METHODS.join(', ');

function reply(status: number, body: string | null, headers: Record<string, string> = {}): Response {
  return new FastResponse(body, { status, headers: { ...headers, [HEADER.version]: VERSION } });
}

const notFound = () => new RouterError(404, 'No such note in the vault.');

/**
 * Wrong vault credentials, per caller address: at most 10 per minute, like dashboard logins. A request
 * without any Authorization header (a client's first probe before the challenge) is not a guess.
 */
const guesses = new FailureThrottle(10, 60_000, 'Too many failed note-vault logins; try again later.');

/** 404 when no vault is enabled (as if the route did not exist), 401 with a Basic challenge without its credentials. */
function authenticate(event: H3Event, services: Services): void {
  const creds = loadCredentials(services);
  if (!creds?.enabled) throw new RouterError(404, `No route matches ${event.req.method} ${WEBDAV_PREFIX}/ (the note vault is not enabled).`);
  const bucket = remoteAddressOf(event);
  guesses.check(bucket);
  const presented = event.req.headers.get('authorization');
  if (!basicAuthOk(presented, creds)) {
    if (presented !== null) guesses.fail(bucket);
    throw new RouterError(401, 'The note vault needs its WebDAV username and password.', { headers: { 'www-authenticate': 'Basic realm="router vault", charset="UTF-8"' } });
  }
  guesses.succeed(bucket);
}

const xmlEscape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const hrefOf = (segments: readonly string[], collection: boolean) =>
  `${WEBDAV_PREFIX}/${segments.map(encodeURIComponent).join('/')}${collection && segments.length > 0 ? '/' : ''}`;

interface Entry {
  href: string;
  name: string;
  collection: boolean;
  modified: Date;
  created?: Date;
  length?: number;
  etag?: string;
}

function responseXml(e: Entry): string {
  const props = [
    `<d:displayname>${xmlEscape(e.name)}</d:displayname>`,
    e.collection ? '<d:resourcetype><d:collection/></d:resourcetype>' : '<d:resourcetype/>',
    `<d:getlastmodified>${e.modified.toUTCString()}</d:getlastmodified>`,
  ];
  if (e.created) props.push(`<d:creationdate>${e.created.toISOString()}</d:creationdate>`);
  if (!e.collection) {
    props.push(`<d:getcontentlength>${e.length}</d:getcontentlength>`, `<d:getetag>${xmlEscape(e.etag!)}</d:getetag>`, '<d:getcontenttype>text/markdown; charset=utf-8</d:getcontenttype>');
  }
  return `<d:response><d:href>${xmlEscape(e.href)}</d:href><d:propstat><d:prop>${props.join('')}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;
}

function noteEntry(type: MemoryType, n: Note): Entry {
  const text = renderNote(n.memory);
  return {
    href: hrefOf([type, n.name], false),
    name: n.name,
    collection: false,
    modified: new Date(n.memory.updatedAt),
    created: new Date(n.memory.createdAt),
    length: Buffer.byteLength(text),
    etag: etagOf(text),
  };
}

const latest = (notes: readonly Note[]) => new Date(Math.max(0, ...notes.map((n) => Date.parse(n.memory.updatedAt))));

function folderEntry(type: MemoryType, notes: readonly Note[]): Entry {
  return { href: hrefOf([type], true), name: type, collection: true, modified: latest(notes) };
}

/** PROPFIND: every property of the resource and, with Depth 1 (or infinity), of its children. */
async function propfind(event: H3Event, services: Services, path: VaultPath): Promise<Response> {
  const depthHeader = (event.req.headers.get('depth') ?? 'infinity').trim().toLowerCase();
  if (depthHeader !== '0' && depthHeader !== '1' && depthHeader !== 'infinity') throw badRequest("Depth must be '0', '1' or 'infinity'.");
  const depth = depthHeader === 'infinity' ? 2 : Number(depthHeader);
  const entries: Entry[] = [];
  if (path.kind === 'root') {
    const folders = await Promise.all(MEMORY_TYPES.map(async (type) => ({ type, notes: await notesOf(services, type) })));
    entries.push({ href: `${WEBDAV_PREFIX}/`, name: 'vault', collection: true, modified: latest(folders.flatMap((f) => f.notes)) });
    if (depth >= 1) for (const f of folders) entries.push(folderEntry(f.type, f.notes));
    if (depth >= 2) for (const f of folders) for (const n of f.notes) entries.push(noteEntry(f.type, n));
  } else if (path.kind === 'folder') {
    const notes = await notesOf(services, path.type);
    entries.push(folderEntry(path.type, notes));
    if (depth >= 1) for (const n of notes) entries.push(noteEntry(path.type, n));
  } else if (path.kind === 'note') {
    const note = findNote(await notesOf(services, path.type), path.name);
    if (!note) throw notFound();
    entries.push(noteEntry(path.type, note));
  } else throw notFound();
  const xml = `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">${entries.map(responseXml).join('')}</d:multistatus>\n`;
  return reply(207, xml, { 'content-type': 'application/xml; charset=utf-8' });
}

async function getNote(services: Services, path: VaultPath): Promise<Response> {
  if (path.kind === 'root' || path.kind === 'folder') throw new RouterError(405, 'A folder has no content: list it with PROPFIND.', { headers: { allow: 'OPTIONS, PROPFIND, MKCOL' } });
  if (path.kind !== 'note') throw notFound();
  const note = findNote(await notesOf(services, path.type), path.name);
  if (!note) throw notFound();
  const text = renderNote(note.memory);
  return reply(200, text, {
    'content-type': 'text/markdown; charset=utf-8',
    etag: etagOf(text),
    'last-modified': new Date(note.memory.updatedAt).toUTCString(),
  });
}

/**
 * If-Match / If-None-Match on writes (RFC 9110 13.1): a sync client that sends the ETag it last saw cannot
 * overwrite or delete a note changed since (412), and `If-None-Match: *` creates only.
 */
function preconditions(event: H3Event, note: Note | undefined): void {
  const current = note ? etagOf(renderNote(note.memory)) : undefined;
  const tags = (v: string) => v.split(',').map((t) => t.trim().replace(/^W\//, ''));
  const ifMatch = event.req.headers.get('if-match');
  if (ifMatch !== null && (current === undefined || (ifMatch.trim() !== '*' && !tags(ifMatch).includes(current)))) {
    throw new RouterError(412, 'The note changed since the ETag given in If-Match (or does not exist).');
  }
  const ifNoneMatch = event.req.headers.get('if-none-match');
  if (ifNoneMatch !== null && current !== undefined && (ifNoneMatch.trim() === '*' || tags(ifNoneMatch).includes(current))) {
    throw new RouterError(412, 'The note exists (If-None-Match).');
  }
}

/** PUT: an existing note updates its memory (content, metadata), a new one creates a memory keyed by its file name. */
async function putNote(event: H3Event, services: Services, path: VaultPath): Promise<Response> {
  if (path.kind === 'root' || path.kind === 'folder') throw new RouterError(405, 'A folder cannot be written.');
  if (path.kind !== 'note') throw new RouterError(403, `Only Markdown notes in the type folders (${MEMORY_TYPES.join(', ')}) can be written.`);
  const bytes = await readBodyBytes(event, VAULT_MAX_NOTE_BYTES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('A note must be UTF-8 text.');
  }
  const parsed = parseNote(text);
  const existing = findNote(await notesOf(services, path.type), path.name);
  preconditions(event, existing);
  if (existing) {
    const patch: { content: string; key?: string; metadata: Record<string, unknown> } = { content: parsed.content, metadata: noteMetadata(parsed, existing.memory.metadata) };
    // A note named by its id has no key in its name: its front matter's key renames it.
    if (isIdName(existing.name) && parsed.key && parsed.key !== existing.memory.key) patch.key = parsed.key;
    const updated = await services.memory.update(existing.memory.id, patch);
    if (!updated) throw notFound();
    return reply(204, null, { etag: etagOf(renderNote(updated)) });
  }
  const key = isIdName(path.name) ? (parsed.key ?? keyFromName(`${path.name}`)) : keyFromName(path.name);
  const created = await services.memory.create({ type: path.type, key, content: parsed.content, apiKeyId: null, metadata: noteMetadata(parsed) });
  return reply(201, null, { etag: etagOf(renderNote(created)) });
}

async function deleteNote(event: H3Event, services: Services, path: VaultPath): Promise<Response> {
  if (path.kind === 'root' || path.kind === 'folder') throw new RouterError(403, 'The vault and its type folders cannot be deleted.');
  if (path.kind !== 'note') throw notFound();
  const note = findNote(await notesOf(services, path.type), path.name);
  if (!note) throw notFound();
  preconditions(event, note);
  if (!(await services.memory.delete(note.memory.id))) throw notFound();
  return reply(204, null);
}

function mkcol(path: VaultPath): Response {
  if (path.kind === 'root' || path.kind === 'folder') throw new RouterError(405, 'That folder exists.', { headers: { allow: 'OPTIONS, PROPFIND' } });
  throw new RouterError(403, `The vault's folders are the memory types (${MEMORY_TYPES.join(', ')}); no other folder can be made.`);
}

/** MOVE: renames a note (its file name is its memory's key) or moves it to another type folder. */
async function moveNote(event: H3Event, services: Services, path: VaultPath): Promise<Response> {
  if (path.kind === 'root' || path.kind === 'folder') throw new RouterError(403, 'Folders cannot be moved.');
  if (path.kind !== 'note') throw notFound();
  const destination = event.req.headers.get('destination');
  if (!destination) throw badRequest('MOVE needs a Destination header.');
  let destPath: string;
  try {
    destPath = new URL(destination, event.url).pathname;
  } catch {
    throw badRequest('The Destination header is not a URL.');
  }
  const dest = parseVaultPath(destPath);
  if (dest.kind !== 'note') throw new RouterError(403, `A note can only be moved to a Markdown file in a type folder (${MEMORY_TYPES.join(', ')}).`);
  const source = findNote(await notesOf(services, path.type), path.name);
  if (!source) throw notFound();
  const target = findNote(await notesOf(services, dest.type), dest.name);
  if (target && target.memory.id === source.memory.id) return reply(204, null);
  if (target && (event.req.headers.get('overwrite') ?? 'T').trim().toUpperCase() === 'F') {
    throw new RouterError(412, 'The destination note exists and Overwrite is F.');
  }
  const key = isIdName(dest.name) ? source.memory.key : keyFromName(dest.name);
  if (target) await services.memory.delete(target.memory.id);
  const moved = await services.memory.update(source.memory.id, { type: dest.type, key });
  if (!moved) throw notFound();
  return reply(target ? 204 : 201, null);
}

/** One WebDAV request: the vault must be enabled, the caller must present its Basic credentials. */
export async function handleWebdav(event: H3Event, services: Services, method: WebdavMethod): Promise<Response> {
  authenticate(event, services);
  const path = parseVaultPath(event.url.pathname);
  switch (method) {
    case 'OPTIONS':
      return reply(200, null, { dav: '1', allow: ALLOW, 'ms-author-via': 'DAV' });
    case 'PROPFIND':
      return propfind(event, services, path);
    case 'GET':
      return getNote(services, path);
    case 'PUT':
      return putNote(event, services, path);
    case 'DELETE':
      return deleteNote(event, services, path);
    case 'MKCOL':
      return mkcol(path);
    case 'MOVE':
      return moveNote(event, services, path);
  }
}
