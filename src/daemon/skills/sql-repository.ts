import type { ZipEntry } from '../archive/unzip.js';
import type { SqlDriver } from '../store/driver.js';
import { valuesList } from '../store/driver.js';
import type { SkillRepository, StoredSkill } from './port.js';

interface Row {
  name: string;
  description: string;
  body: string;
  files: string;
  bytes: number;
  keys: string;
}

/** Files per INSERT (4 columns each). */
const CHUNK = 100;

/**
 * The skills port in the shared PostgreSQL database (cluster mode; migrations/pg/0073_skills.sql): a row per
 * skill (its instructions, file list, size and keys) and a row per file (`skill_files`, the bytes). A skill
 * and its files are replaced in one transaction, so another node never reads half a skill.
 */
export class SqlSkillRepository implements SkillRepository {
  constructor(
    private readonly driver: SqlDriver,
    private readonly now: () => string = () => new Date().toISOString(),
  ) {}

  async loadAll(): Promise<StoredSkill[]> {
    const rows = await this.driver.query<Row>('SELECT name, description, body, files, bytes, keys FROM skills');
    return rows.map((r) => ({ name: r.name, description: r.description, body: r.body, files: JSON.parse(r.files) as string[], bytes: r.bytes, keys: JSON.parse(r.keys) as string[] }));
  }

  async put(skill: StoredSkill, files: readonly ZipEntry[]): Promise<void> {
    const at = this.now();
    await this.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM skill_files WHERE skill = ?', [skill.name]);
      await tx.run(
        `INSERT INTO skills (name, description, body, files, bytes, keys, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET description = excluded.description, body = excluded.body, files = excluded.files,
           bytes = excluded.bytes, keys = excluded.keys, updated_at = excluded.updated_at`,
        [skill.name, skill.description, skill.body, JSON.stringify(skill.files), skill.bytes, JSON.stringify(skill.keys), at],
      );
      for (let i = 0; i < files.length; i += CHUNK) {
        const chunk = files.slice(i, i + CHUNK);
        await tx.run(
          `INSERT INTO skill_files (skill, path, data, bytes) VALUES ${valuesList(chunk.length, 4)}`,
          chunk.flatMap((f) => [skill.name, f.path, Buffer.from(f.data), f.data.length]),
        );
      }
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM skill_files WHERE skill = ?', [name]);
      return (await tx.run('DELETE FROM skills WHERE name = ?', [name])).changes > 0;
    });
  }

  async setKeys(name: string, keys: readonly string[]): Promise<boolean> {
    const { changes } = await this.driver.run('UPDATE skills SET keys = ?, updated_at = ? WHERE name = ?', [JSON.stringify(keys), this.now(), name]);
    return changes > 0;
  }

  async file(name: string, path: string): Promise<Buffer | undefined> {
    const [row] = await this.driver.query<{ data: Buffer }>('SELECT data FROM skill_files WHERE skill = ? AND path = ?', [name, path]);
    return row ? Buffer.from(row.data) : undefined;
  }
}
