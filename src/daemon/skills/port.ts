import type { ZipEntry } from '../archive/unzip.js';

/** A skill as the catalog keeps it in memory: everything but its files' contents. */
export interface StoredSkill {
  name: string;
  description: string;
  /** The instructions: SKILL.md after its front matter. */
  body: string;
  /** Files of the skill (relative paths, SKILL.md included), sorted. */
  files: string[];
  bytes: number;
  /** API key ids whose requests get the instructions. */
  keys: string[];
}

/**
 * The skills catalog's storage port: each skill with its files. One machine: `DiskSkillRepository`, the
 * state folder's `skills/<name>/` folders (as before, so a user's skills stay where they were); cluster
 * mode: `SqlSkillRepository`, rows of the shared PostgreSQL database (a skill and each of its files), so a
 * skill installed on one node is served by every node. The catalog keeps the snapshot the request stage and
 * the MCP prompts read (test/skills/port.test.ts runs the same checks on both).
 */
export interface SkillRepository {
  /** Every skill, without its files' contents. */
  loadAll(): Promise<StoredSkill[]>;
  /** Stores a skill and its files, replacing a skill of that name and all its files. */
  put(skill: StoredSkill, files: readonly ZipEntry[]): Promise<void>;
  /** False when there was no such skill. */
  remove(name: string): Promise<boolean>;
  /** False when there is no such skill. */
  setKeys(name: string, keys: readonly string[]): Promise<boolean>;
  /** One file of a skill, or undefined. */
  file(name: string, path: string): Promise<Buffer | undefined>;
}
