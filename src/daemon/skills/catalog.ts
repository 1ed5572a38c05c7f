/**
 * The Agent Skills catalog: skills (a `SKILL.md` with YAML front matter, `name` and `description`, then the
 * instructions, and its resources) kept through the skills port (port.ts: the state folder's
 * `<state>/skills/<name>/` on one machine, rows of the shared database in cluster mode). The index is read at
 * start and updated by each change, so requests never touch storage for it; a change on another node of the
 * cluster (topic `skills`) reloads it.
 */
import { readdirSync, readFileSync, statSync, lstatSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ChangeFeed } from '../store/changes.js';
import { yaml } from '../system/yaml.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { ZipEntry } from '../archive/unzip.js';
import type { SkillRepository, StoredSkill } from './port.js';

/** Agent Skills naming rule: lowercase letters, digits and hyphens, at most 64 characters. */
const NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const MAX_DESCRIPTION = 1024;
/** Limits of one skill (folder or archive): files and total bytes. */
export const SKILL_LIMITS = { maxEntries: 200, maxBytes: 10 * 1024 * 1024, maxEntryBytes: 5 * 1024 * 1024 } as const;
/** Instructions injected into one request, at most (the skills' bodies, in name order, cut here). */
const MAX_INJECTED_CHARS = 32_000;
/** The change topic of the catalog. */
export const SKILLS_TOPIC = 'skills';

export type Skill = StoredSkill;

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

/** The parsed skill of a folder's or archive's entries (SKILL.md at the root), or why not. */
export function skillOf(entries: ZipEntry[], keys: string[]): { skill: Skill; files: ZipEntry[] } {
  const files = skillRoot(entries);
  const parsed = parseSkillMd(Buffer.from(files.find((e) => e.path === 'SKILL.md')!.data).toString('utf8'));
  return {
    skill: { ...parsed, files: files.map((f) => f.path).sort(), bytes: files.reduce((n, f) => n + f.data.length, 0), keys },
    files,
  };
}

export class SkillCatalog {
  private skills = new Map<string, Skill>();

  private constructor(
    private readonly repo: SkillRepository,
    private readonly changes: ChangeFeed,
  ) {}

  /** Loads the catalog and follows the other nodes' changes (a failed reload goes to `onError`). */
  static async create(repo: SkillRepository, changes: ChangeFeed, onError: (err: unknown) => void): Promise<SkillCatalog> {
    const catalog = new SkillCatalog(repo, changes);
    await catalog.reload();
    changes.subscribe(SKILLS_TOPIC, () => catalog.reload().catch(onError));
    return catalog;
  }

  /** Replaces the index with what storage holds now. */
  async reload(): Promise<void> {
    const all = await this.repo.loadAll();
    this.skills = new Map(all.map((s) => [s.name, s]));
  }

  list(): SkillSummary[] {
    return [...this.skills.values()].sort((a, b) => a.name.localeCompare(b.name)).map(({ body: _b, ...rest }) => rest);
  }

  get(name: string): Skill | undefined {
    return this.skills.get(name);
  }

  /** Adds (or, with `replace`, replaces) a skill from its files; stored first, then indexed. */
  async add(entries: ZipEntry[], opts: { keys?: string[]; replace?: boolean }): Promise<Skill> {
    const probe = skillOf(entries, []);
    const before = this.skills.get(probe.skill.name);
    if (before && !opts.replace) throw new RouterError(409, `A skill named '${probe.skill.name}' exists; delete it first or send replace: true.`, { code: 'conflict' });
    const skill: Skill = { ...probe.skill, keys: [...new Set(opts.keys ?? before?.keys ?? [])] };
    await this.repo.put(skill, probe.files);
    this.skills.set(skill.name, skill);
    this.changes.publish(SKILLS_TOPIC);
    return skill;
  }

  async remove(name: string): Promise<boolean> {
    if (!this.skills.has(name)) return false;
    await this.repo.remove(name);
    this.skills.delete(name);
    this.changes.publish(SKILLS_TOPIC);
    return true;
  }

  async setKeys(name: string, keys: string[]): Promise<Skill | undefined> {
    const skill = this.skills.get(name);
    if (!skill) return undefined;
    const next = [...new Set(keys)];
    if (!(await this.repo.setKeys(name, next))) return undefined;
    const updated = { ...skill, keys: next };
    this.skills.set(name, updated);
    this.changes.publish(SKILLS_TOPIC);
    return updated;
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
}
