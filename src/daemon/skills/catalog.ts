/**
 * The Agent Skills catalog: folders holding a `SKILL.md` (YAML front matter with `name` and `description`,
 * then the instructions) and its resources, kept under `<state>/skills/<name>/`. The index is read once at
 * start and updated by each change, so requests never touch the disk for it. Which API keys get a skill's
 * instructions injected into their requests is kept in `<state>/skills/.keys.json`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, lstatSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import { yaml } from '../system/yaml.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { ZipEntry } from '../archive/unzip.js';

/** Agent Skills naming rule: lowercase letters, digits and hyphens, at most 64 characters. */
const NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const MAX_DESCRIPTION = 1024;
/** Limits of one skill (folder or archive): files and total bytes. */
export const SKILL_LIMITS = { maxEntries: 200, maxBytes: 10 * 1024 * 1024, maxEntryBytes: 5 * 1024 * 1024 } as const;
/** Instructions injected into one request, at most (the skills' bodies, in name order, cut here). */
const MAX_INJECTED_CHARS = 32_000;
const KEYS_FILE = '.keys.json';

export interface Skill {
  name: string;
  description: string;
  /** The instructions: SKILL.md after its front matter. */
  body: string;
  /** Files of the skill (relative paths, SKILL.md included). */
  files: string[];
  bytes: number;
  /** API key ids whose requests get the instructions. */
  keys: string[];
}

export type SkillSummary = Omit<Skill, 'body'>;

interface ParsedSkill {
  name: string;
  description: string;
  body: string;
}

/** Reads SKILL.md: front matter between `---` lines, with a valid name and a description. */
export function parseSkillMd(text: string): ParsedSkill {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text.replace(/^\uFEFF/, ''));
  if (!m) throw badRequest('SKILL.md must start with YAML front matter between --- lines (name, description).', 'SKILL.md');
  let meta: unknown;
  try {
    meta = yaml().parse(m[1]!);
  } catch (err) {
    throw badRequest(`SKILL.md front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`, 'SKILL.md');
  }
  const fm = (meta ?? {}) as Record<string, unknown>;
  const name = fm.name;
  const description = fm.description;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw badRequest('SKILL.md needs a `name` of lowercase letters, digits and hyphens (at most 64 characters).', 'name');
  }
  if (typeof description !== 'string' || description.trim() === '' || description.length > MAX_DESCRIPTION) {
    throw badRequest(`SKILL.md needs a \`description\` (1 to ${MAX_DESCRIPTION} characters).`, 'description');
  }
  return { name, description: description.trim(), body: m[2]!.trim() };
}

/** Reads a skill folder from disk (no symlinks followed, within the limits) as archive-like entries. */
export function readSkillFolder(root: string): ZipEntry[] {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(root);
  } catch {
    throw badRequest(`No folder at ${root}.`, 'path');
  }
  if (!st.isDirectory()) throw badRequest(`${root} is not a folder.`, 'path');
  const out: ZipEntry[] = [];
  let total = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      const l = lstatSync(full);
      if (l.isSymbolicLink()) throw badRequest(`The skill folder holds a symbolic link (${relative(root, full)}); copy the file itself.`, 'path');
      if (l.isDirectory()) {
        walk(full);
        continue;
      }
      if (!l.isFile()) continue;
      if (out.length >= SKILL_LIMITS.maxEntries) throw badRequest(`The skill folder has more than ${SKILL_LIMITS.maxEntries} files.`, 'path');
      total += l.size;
      if (l.size > SKILL_LIMITS.maxEntryBytes || total > SKILL_LIMITS.maxBytes) {
        throw new RouterError(413, `The skill folder is larger than ${SKILL_LIMITS.maxBytes} bytes (or one file than ${SKILL_LIMITS.maxEntryBytes}).`);
      }
      out.push({ path: relative(root, full).split(sep).join('/'), data: readFileSync(full) });
    }
  };
  walk(root);
  return out;
}

/** The entries of one skill: SKILL.md at the root, or inside one top folder (how archives usually come). */
function skillRoot(entries: ZipEntry[]): ZipEntry[] {
  const files = entries.filter((e) => !e.path.endsWith('/'));
  if (files.some((e) => e.path === 'SKILL.md')) return files;
  const tops = new Set(files.map((e) => e.path.split('/')[0]));
  if (tops.size === 1) {
    const top = [...tops][0]!;
    if (files.some((e) => e.path === `${top}/SKILL.md`)) return files.map((e) => ({ path: e.path.slice(top.length + 1), data: e.data }));
  }
  throw badRequest('No SKILL.md at the root of the skill (or of its single top folder).', 'SKILL.md');
}

export class SkillCatalog {
  private readonly skills = new Map<string, Skill>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keys = this.readKeys();
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      try {
        const entries = readSkillFolder(join(dir, name));
        const parsed = parseSkillMd(Buffer.from(entries.find((e) => e.path === 'SKILL.md')?.data ?? '').toString('utf8'));
        this.skills.set(parsed.name, this.record(parsed, entries, keys[parsed.name] ?? []));
      } catch {
        // A folder that is not a readable skill is left alone (and not listed).
      }
    }
  }

  list(): SkillSummary[] {
    return [...this.skills.values()].sort((a, b) => a.name.localeCompare(b.name)).map(({ body: _b, ...rest }) => rest);
  }

  get(name: string): Skill | undefined {
    return this.skills.get(name);
  }

  /** Adds (or, with `replace`, replaces) a skill from its files; written to a temp folder, then renamed in. */
  add(entries: ZipEntry[], opts: { keys?: string[]; replace?: boolean }): Skill {
    const files = skillRoot(entries);
    const parsed = parseSkillMd(Buffer.from(files.find((e) => e.path === 'SKILL.md')!.data).toString('utf8'));
    const existing = this.skills.get(parsed.name);
    if (existing && !opts.replace) throw new RouterError(409, `A skill named '${parsed.name}' exists; delete it first or send replace: true.`, { code: 'conflict' });
    const tmp = join(this.dir, `.incoming-${randomUUID()}`);
    try {
      for (const f of files) {
        const target = join(tmp, ...f.path.split('/'));
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        writeFileSync(target, f.data, { mode: 0o600 });
      }
      const final = join(this.dir, parsed.name);
      if (existsSync(final)) rmSync(final, { recursive: true, force: true });
      renameSync(tmp, final);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
    const skill = this.record(parsed, files, opts.keys ?? existing?.keys ?? []);
    this.skills.set(skill.name, skill);
    this.writeKeys();
    return skill;
  }

  remove(name: string): boolean {
    if (!this.skills.delete(name)) return false;
    rmSync(join(this.dir, name), { recursive: true, force: true });
    this.writeKeys();
    return true;
  }

  setKeys(name: string, keys: string[]): Skill | undefined {
    const skill = this.skills.get(name);
    if (!skill) return undefined;
    skill.keys = [...new Set(keys)];
    this.writeKeys();
    return skill;
  }

  /** The instructions to inject for an API key (enabled skills, in name order), or undefined. */
  instructionsFor(keyId: string): string | undefined {
    let text = '';
    for (const s of [...this.skills.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      if (!s.keys.includes(keyId)) continue;
      text += `${text ? '\n\n' : ''}## Skill: ${s.name}\n${s.description}\n\n${s.body}`;
    }
    if (!text) return undefined;
    return text.length > MAX_INJECTED_CHARS ? `${text.slice(0, MAX_INJECTED_CHARS)}\n[skill instructions cut at ${MAX_INJECTED_CHARS} characters]` : text;
  }

  /** Whether any skill is enabled for a key (the stage's cheap check). */
  hasSkillsFor(keyId: string): boolean {
    for (const s of this.skills.values()) if (s.keys.includes(keyId)) return true;
    return false;
  }

  private record(parsed: ParsedSkill, files: ZipEntry[], keys: string[]): Skill {
    return {
      ...parsed,
      files: files.map((f) => f.path).sort(),
      bytes: files.reduce((n, f) => n + f.data.length, 0),
      keys,
    };
  }

  private readKeys(): Record<string, string[]> {
    try {
      const v = JSON.parse(readFileSync(join(this.dir, KEYS_FILE), 'utf8')) as unknown;
      return v && typeof v === 'object' ? (v as Record<string, string[]>) : {};
    } catch {
      return {};
    }
  }

  private writeKeys(): void {
    const out: Record<string, string[]> = {};
    for (const s of this.skills.values()) if (s.keys.length) out[s.name] = s.keys;
    const file = join(this.dir, KEYS_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(out), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }
}
