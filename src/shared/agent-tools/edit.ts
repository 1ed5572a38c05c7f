/**
 * Edits of other programs' config files that keep everything router does not own: JSON keeps its key
 * order, indentation and final newline; TOML is edited line by line, so comments and formatting of the
 * rest of the file stay exactly as they were.
 */

/** A settings file router will not rewrite (not plain JSON, or not an object); the message says why. */
export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export type JsonObject = Record<string, unknown>;

/** Sets `obj[path...] = value`, creating objects on the way. */
export function setPath(obj: JsonObject, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    const next = cur[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as JsonObject;
  }
  cur[path[path.length - 1]!] = value;
}

/**
 * Applies `mutate` to a JSON file's object. A file that does not exist starts empty (2-space indent, final
 * newline). A file that is not a JSON object (comments included) is refused: rewriting it would lose them.
 * Returns the text unchanged when the mutation changes nothing.
 */
export function editJson(text: string | null, file: string, mutate: (obj: JsonObject) => void): string {
  if (text === null || text.trim() === '') {
    const obj: JsonObject = {};
    mutate(obj);
    return `${JSON.stringify(obj, null, 2)}\n`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new ConfigFileError(`${file} is not plain JSON (${(err as Error).message}); router will not rewrite it. Edit it by hand or move it aside.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigFileError(`${file} does not hold a JSON object; router will not rewrite it.`);
  const before = JSON.stringify(parsed);
  mutate(parsed as JsonObject);
  if (JSON.stringify(parsed) === before) return text;
  const indentMatch = /\n([ \t]+)"/.exec(text);
  const indent = indentMatch ? indentMatch[1]! : /^\{\s*"/.test(text) && !text.includes('\n') ? '' : '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  let out = indent === '' ? JSON.stringify(parsed) : JSON.stringify(parsed, null, indent);
  if (eol === '\r\n') out = out.replace(/\n/g, '\r\n');
  return /\r?\n$/.test(text) ? out + eol : out;
}

/** A TOML basic string literal. */
export function tomlString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

const HEADER_RE = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;

/** The table header a line opens, normalized (`[ a."b" ]` -> `a.b`), or undefined. */
function headerOf(line: string): string | undefined {
  const m = HEADER_RE.exec(line);
  if (!m) return undefined;
  return m[1]!
    .split('.')
    .map((p) => p.trim().replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'))
    .join('.');
}

/** Line indexes that open a table, skipping lines inside multi-line strings. */
function headerLines(lines: string[]): Array<{ index: number; name: string }> {
  const out: Array<{ index: number; name: string }> = [];
  let inMulti: string | undefined;
  lines.forEach((line, index) => {
    if (inMulti) {
      if (line.includes(inMulti)) inMulti = undefined;
      return;
    }
    const name = headerOf(line);
    if (name !== undefined) out.push({ index, name });
    for (const q of ['"""', "'''"]) {
      const count = line.split(q).length - 1;
      if (count % 2 === 1) inMulti = q;
    }
  });
  return out;
}

const keyRe = (key: string) => new RegExp(`^\\s*("?)${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1\\s*=`);

/** Sets a key of the root table (before the first header): replaces its line, or adds it after the root's last key. */
export function tomlSetRootKey(text: string, key: string, literal: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  const first = headerLines(lines)[0]?.index ?? lines.length;
  const re = keyRe(key);
  for (let i = 0; i < first; i++) {
    if (re.test(lines[i]!)) {
      lines[i] = `${key} = ${literal}`;
      return lines.join(eol);
    }
  }
  let at = 0;
  for (let i = 0; i < first; i++) if (/^\s*[A-Za-z0-9_"'-]+\s*=/.test(lines[i]!)) at = i + 1;
  lines.splice(at, 0, `${key} = ${literal}`);
  return lines.join(eol);
}

/** Replaces the body of table `[name]` (keeping its header line), or appends the table at the end. */
export function tomlSetTable(text: string, name: string, body: string[]): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  const headers = headerLines(lines);
  const at = headers.findIndex((h) => h.name === name);
  if (at >= 0) {
    const start = headers[at]!.index + 1;
    let end = headers[at + 1]?.index ?? lines.length;
    // Keep blank lines and comments that introduce the next table with that table.
    while (end > start && (lines[end - 1]!.trim() === '' || (lines[end - 1]!.trim().startsWith('#') && end < lines.length))) end--;
    lines.splice(start, end - start, ...body);
    return lines.join(eol);
  }
  // Append: one blank line between the previous content and the new table; keep a final newline.
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  if (lines.length) lines.push('');
  lines.push(`[${name}]`, ...body, '');
  return lines.join(eol);
}

/** A dotenv value as dotenv reads it back: bare when plain, else double-quoted with escapes. */
function dotenvValue(v: string): string {
  return /^[A-Za-z0-9_./:@+-]*$/.test(v) ? v : `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * Sets `KEY=value` lines of a dotenv file: an existing line of the key is replaced in place (`export KEY=`
 * too), a new key is appended; every other line (comments, blank lines, other keys) stays as it was.
 */
export function dotenvSet(text: string | null, values: Record<string, string>): string {
  const eol = text?.includes('\r\n') ? '\r\n' : '\n';
  const lines = text ? text.split(/\r?\n/) : [];
  const hadFinal = lines.length > 0 && lines[lines.length - 1] === '';
  if (hadFinal) lines.pop();
  for (const [key, value] of Object.entries(values)) {
    const re = new RegExp(`^\\s*(?:export\\s+)?${key}\\s*=`);
    const at = lines.findIndex((l) => re.test(l));
    const line = `${key}=${dotenvValue(value)}`;
    if (at >= 0) lines[at] = line;
    else lines.push(line);
  }
  return lines.join(eol) + eol;
}

/** The value of `key` in a dotenv file (quotes and `export` removed), or undefined. */
export function dotenvGet(text: string, key: string): string | undefined {
  const m = new RegExp(`^\\s*(?:export\\s+)?${key}\\s*=\\s*(.*)$`, 'm').exec(text);
  if (!m) return undefined;
  const raw = m[1]!.trim();
  if (raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2) return raw.slice(1, -1).replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  if (raw.startsWith("'") && raw.endsWith("'") && raw.length >= 2) return raw.slice(1, -1);
  return raw.replace(/\s+#.*$/, '');
}

/** The string value of `key` inside TOML table `[table]` (basic or literal string), or undefined. */
export function tomlGet(text: string, table: string, key: string): string | undefined {
  const lines = text.split(/\r?\n/);
  const headers = headerLines(lines);
  const at = headers.findIndex((h) => h.name === table);
  if (at < 0) return undefined;
  const end = headers[at + 1]?.index ?? lines.length;
  const re = keyRe(key);
  for (let i = headers[at]!.index + 1; i < end; i++) {
    const line = lines[i]!;
    if (!re.test(line)) continue;
    const v = line.slice(line.indexOf('=') + 1).trim();
    const basic = /^"((?:[^"\\]|\\.)*)"/.exec(v);
    if (basic) return basic[1]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    const literal = /^'([^']*)'/.exec(v);
    if (literal) return literal[1];
  }
  return undefined;
}
