import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import type { ZipEntry } from '../archive/unzip.js';
import { readSkillFolder, skillOf } from './catalog.js';
import type { SkillRepository, StoredSkill } from './port.js';

const KEYS_FILE = '.keys.json';

/**
 * The skills port on one machine: each skill is a folder `<state>/skills/<name>/` (its files as they came),
 * and which API keys get a skill's instructions is `<state>/skills/.keys.json`; exactly where router always
 * kept them. A folder is written to a temp folder and renamed in, so a reader never sees half a skill.
 */
export class DiskSkillRepository implements SkillRepository {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  async loadAll(): Promise<StoredSkill[]> {
    const keys = this.readKeys();
    const out: StoredSkill[] = [];
    for (const name of readdirSync(this.dir)) {
      if (name.startsWith('.')) continue;
      try {
        out.push(skillOf(readSkillFolder(join(this.dir, name)), []).skill);
      } catch {
        // A folder that is not a readable skill is left alone (and not listed).
      }
    }
    for (const s of out) s.keys = keys[s.name] ?? [];
    return out;
  }

  async put(skill: StoredSkill, files: readonly ZipEntry[]): Promise<void> {
    const tmp = join(this.dir, `.incoming-${randomUUID()}`);
    try {
      for (const f of files) {
        const target = join(tmp, ...f.path.split('/'));
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        writeFileSync(target, f.data, { mode: 0o600 });
      }
      const final = join(this.dir, skill.name);
      if (existsSync(final)) rmSync(final, { recursive: true, force: true });
      renameSync(tmp, final);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
    this.writeKeys({ ...this.readKeys(), [skill.name]: skill.keys });
  }

  async remove(name: string): Promise<boolean> {
    const folder = join(this.dir, name);
    if (!existsSync(folder)) return false;
    rmSync(folder, { recursive: true, force: true });
    const keys = this.readKeys();
    delete keys[name];
    this.writeKeys(keys);
    return true;
  }

  async setKeys(name: string, keys: readonly string[]): Promise<boolean> {
    if (!existsSync(join(this.dir, name, 'SKILL.md'))) return false;
    this.writeKeys({ ...this.readKeys(), [name]: [...keys] });
    return true;
  }

  async file(name: string, path: string): Promise<Buffer | undefined> {
    const rel = normalize(path);
    if (rel.startsWith('..') || rel.startsWith(sep) || name.startsWith('.') || name.includes('/')) return undefined;
    try {
      return readFileSync(join(this.dir, name, rel));
    } catch {
      return undefined;
    }
  }

  private readKeys(): Record<string, string[]> {
    try {
      const v = JSON.parse(readFileSync(join(this.dir, KEYS_FILE), 'utf8')) as unknown;
      return v && typeof v === 'object' ? (v as Record<string, string[]>) : {};
    } catch {
      return {};
    }
  }

  /** Only keys that are set are written (a skill switched off for every key has no entry). */
  private writeKeys(all: Record<string, string[]>): void {
    const out: Record<string, string[]> = {};
    for (const [name, keys] of Object.entries(all)) if (keys.length) out[name] = keys;
    const file = join(this.dir, KEYS_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(out), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }
}

/**
 * Copies one machine's skills (its state folder's `skills/`) into another store: `router cluster migrate`
 * moves them into the cluster's database, where they are rows rather than folders. Returns how many.
 */
export async function copySkillFolders(dir: string, into: SkillRepository): Promise<number> {
  if (!existsSync(dir)) return 0;
  const skills = await new DiskSkillRepository(dir).loadAll();
  for (const s of skills) await into.put(s, skillOf(readSkillFolder(join(dir, s.name)), s.keys).files);
  return skills.length;
}
