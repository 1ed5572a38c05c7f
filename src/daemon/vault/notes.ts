import { createHash } from 'node:crypto';
import { yaml } from '../system/yaml.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { Services } from '../services.js';
import { MEMORY_TYPES, type MemoryEntry, type MemoryType } from '../memory/types.js';

/**
 * The vault's layout (docs/vault.md): the root holds one folder per memory type, each folder one Markdown
 * note per memory of the global pool: `/<type>/<key>.md`, or `/<type>/<id>.md` when the key cannot be a
 * file name (a slash, a control character, a leading dot...) or another, older memory of that type has
 * the same key (case-insensitively). Names follow the key, so they stay put until the key changes.
 */
export const WEBDAV_PREFIX = '/api/v1/webdav';

export type VaultPath = { kind: 'root' } | { kind: 'folder'; type: MemoryType } | { kind: 'note'; type: MemoryType; name: string } | { kind: 'other' };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_NAME = 200;

const traversal = () => badRequest('The path is not a valid vault path (dot segments, backslashes, NUL and absolute paths are refused).');

/** True when a decoded path has a `.` or `..` segment, a backslash or a NUL. */
function unsafe(decoded: string): boolean {
  if (decoded.includes('\0') || decoded.includes('\\')) return true;
  return decoded.split('/').some((s) => s === '.' || s === '..');
}

/**
 * A request path (still percent-encoded, as on the wire) under the WebDAV prefix -> the vault path it
 * names. Decoded once; `..` segments, encoded (`..%2f`) or double-encoded (`%252e%252e`), backslashes,
 * NUL, empty segments (`//etc`) and drive letters are refused with 400 before anything is looked up.
 */
export function parseVaultPath(pathname: string): VaultPath {
  if (pathname !== WEBDAV_PREFIX && !pathname.startsWith(`${WEBDAV_PREFIX}/`)) throw traversal();
  const raw = pathname.slice(WEBDAV_PREFIX.length);
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw badRequest('The path is not valid percent-encoding.');
  }
  if (unsafe(decoded)) throw traversal();
  try {
    // A second decoding is never applied, but what it would reveal is refused: `%252e%252e` -> `..`.
    if (unsafe(decodeURIComponent(decoded))) throw traversal();
  } catch (e) {
    if (e instanceof RouterError) throw e;
  }
  const segments = decoded.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop(); // trailing slash
  if (segments.some((s) => s === '')) throw traversal();
  if (segments.length > 0 && /^[A-Za-z]:$/.test(segments[0]!)) throw traversal();
  if (segments.length === 0) return { kind: 'root' };
  const type = MEMORY_TYPES.find((t) => t === segments[0]);
  if (!type || segments.length > 2) return { kind: 'other' };
  if (segments.length === 1) return { kind: 'folder', type };
  const file = segments[1]!;
  if (!file.toLowerCase().endsWith('.md') || file.length <= 3) return { kind: 'other' };
  return { kind: 'note', type, name: file };
}

/** True when a memory key can be a note's file name as it is. */
export function fileSafeKey(key: string): boolean {
  return (
    key.length > 0 &&
    key.length <= MAX_NAME &&
    !/[/\\\u0000-\u001f\u007f]/.test(key) &&
    !key.startsWith('.') &&
    !/[ .]$/.test(key) &&
    !UUID_RE.test(key)
  );
}

/** The key a new note's file name gives its memory; 400 when the name cannot be a key. */
export function keyFromName(name: string): string {
  const key = name.slice(0, -3);
  if (!fileSafeKey(key)) throw badRequest(`'${name.slice(0, 100)}' cannot name a note: no leading dot, no trailing dot or space, at most ${MAX_NAME} characters.`);
  return key;
}

export const isIdName = (name: string) => UUID_RE.test(name.slice(0, -3));

export interface Note {
  name: string;
  memory: MemoryEntry;
}

/** Every note of a type folder, names assigned oldest memory first (so a newer duplicate never takes a name). */
export async function notesOf(services: Services, type: MemoryType): Promise<Note[]> {
  const all: MemoryEntry[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await services.memory.list({ apiKeyId: null, type, limit: 200, offset });
    all.push(...page.data);
    if (page.data.length < 200) break;
  }
  all.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  const taken = new Set<string>();
  return all.map((memory) => {
    const lower = memory.key.toLowerCase();
    if (fileSafeKey(memory.key) && !taken.has(lower)) {
      taken.add(lower);
      return { name: `${memory.key}.md`, memory };
    }
    return { name: `${memory.id}.md`, memory };
  });
}

/** The note a name designates in a type folder: by its name (case-insensitively) or by `<id>.md`. */
export function findNote(notes: readonly Note[], name: string): Note | undefined {
  const lower = name.toLowerCase();
  return notes.find((n) => n.name.toLowerCase() === lower) ?? (isIdName(name) ? notes.find((n) => `${n.memory.id}.md` === lower) : undefined);
}

/**
 * Where a note's own front matter (anything but router's fields: `title`, `tags`, `aliases`...) is kept: a
 * reserved key of the memory's metadata, written back at the top of the note's front matter.
 */
export const NOTE_FRONT_MATTER = 'frontMatter';
/** Front matter fields router writes itself; a client's values for them are ignored (the path names the memory). */
const ROUTER_FIELDS = new Set(['id', 'type', 'key', 'created', 'updated', 'metadata']);

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A memory as a Markdown note: YAML front matter (id, type, key, created, updated, the note's own fields,
 * metadata), then the content.
 */
export function renderNote(m: MemoryEntry): string {
  const front: Record<string, unknown> = { id: m.id, type: m.type, key: m.key, created: m.createdAt, updated: m.updatedAt };
  const { [NOTE_FRONT_MATTER]: own, ...metadata } = m.metadata;
  if (isMapping(own)) for (const [k, v] of Object.entries(own)) if (!ROUTER_FIELDS.has(k)) front[k] = v;
  if (Object.keys(metadata).length > 0) front.metadata = metadata;
  return `---\n${yaml().stringify(front)}---\n${m.content}\n`;
}

/**
 * The metadata a written note gives its memory: the note's `metadata` mapping (else the memory's current
 * metadata, for an existing note) with the note's own front matter fields under NOTE_FRONT_MATTER, replaced
 * as a whole (a field removed from the note is gone).
 */
export function noteMetadata(parsed: ParsedNote, current: Record<string, unknown> = {}): Record<string, unknown> {
  const { [NOTE_FRONT_MATTER]: _previous, ...base } = parsed.metadata ?? current;
  return Object.keys(parsed.fields).length > 0 ? { ...base, [NOTE_FRONT_MATTER]: parsed.fields } : base;
}

export function etagOf(text: string): string {
  return `"${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 27)}"`;
}

const FRONT_RE = /^---\r?\n([\s\S]*?)\r?\n?---\r?\n?/;

/** A note as written by a client, read (see parseNote). */
export interface ParsedNote {
  content: string;
  key?: string;
  metadata?: Record<string, unknown>;
  /** The note's own front matter fields (`title`, `tags`...), in their order. */
  fields: Record<string, unknown>;
}

/**
 * A note as written by a client -> its content and the front matter fields the vault takes: `key` (used
 * for notes named by id), `metadata`, and every field that is not router's own (`title`, `tags`...: kept
 * with the memory and written back). Router's own fields (id, type, dates) are ignored: the path names the
 * memory. One trailing newline is the file's, not the content's.
 */
export function parseNote(text: string): ParsedNote {
  let body = text;
  let front: Record<string, unknown> = {};
  const m = FRONT_RE.exec(text);
  if (m) {
    let parsed: unknown;
    try {
      parsed = yaml().parse(m[1]!);
    } catch {
      throw badRequest('The note front matter is not valid YAML.');
    }
    if (parsed !== null && parsed !== undefined && !isMapping(parsed)) throw badRequest('The note front matter must be a YAML mapping.');
    front = (parsed ?? {}) as Record<string, unknown>;
    body = text.slice(m[0].length);
  }
  const content = body.endsWith('\r\n') ? body.slice(0, -2) : body.endsWith('\n') ? body.slice(0, -1) : body;
  if (content.trim() === '') throw badRequest('A note needs a body: it is the memory content.');
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(front)) if (!ROUTER_FIELDS.has(k)) fields[k] = v;
  const out: ParsedNote = { content, fields };
  if (typeof front.key === 'string' && front.key.trim() !== '') out.key = front.key;
  if (front.metadata !== undefined) {
    if (!isMapping(front.metadata)) throw badRequest("The front matter's metadata must be a mapping.");
    out.metadata = front.metadata;
  }
  return out;
}
