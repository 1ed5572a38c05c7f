/**
 * The skills port on both of its adapters, with the same checks: one machine's folders under the state
 * folder (DiskSkillRepository) and the shared PostgreSQL 15 database of cluster mode (SqlSkillRepository).
 * A skill round trips with its files; replace, keys, remove; two nodes: a skill installed on A is in B's
 * catalog (and its instructions injected for the key) once B hears the change notice, well within 1 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ZipEntry } from '../../src/daemon/archive/unzip.js';
import { SkillCatalog } from '../../src/daemon/skills/catalog.js';
import { copySkillFolders, DiskSkillRepository } from '../../src/daemon/skills/disk-repository.js';
import type { SkillRepository } from '../../src/daemon/skills/port.js';
import { SqlSkillRepository } from '../../src/daemon/skills/sql-repository.js';
import { linkedFeeds } from '../support/port-fixtures.js';
import { storageAdapters } from '../support/storage.js';

const skillFiles = (name: string, body = 'Write release notes in three bullets.', extra: ZipEntry[] = []): ZipEntry[] => [
  { path: 'SKILL.md', data: Buffer.from(`---\nname: ${name}\ndescription: Release notes ünï\n---\n\n${body}\n`) },
  { path: 'templates/notes.md', data: Buffer.from('# Notes\n') },
  { path: 'bin/tool.bin', data: Buffer.from([0, 1, 2, 255, 254]) },
  ...extra,
];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const [, pg] = storageAdapters();
interface Backend {
  name: string;
  unavailable: string | undefined;
  /** Two repositories on one store (two nodes). */
  open(): Promise<[SkillRepository, SkillRepository]>;
}
const backends: Backend[] = [
  {
    name: 'one machine (state folder)',
    unavailable: undefined,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'router-skills-'));
      dirs.push(dir);
      return [new DiskSkillRepository(join(dir, 'skills')), new DiskSkillRepository(join(dir, 'skills'))];
    },
  },
  {
    name: 'cluster (PostgreSQL)',
    unavailable: pg!.unavailable,
    async open() {
      const storage = await pg!.open();
      return [new SqlSkillRepository(storage.driver), new SqlSkillRepository(await storage.connect())];
    },
  },
];

for (const backend of backends) {
  describe.skipIf(backend.unavailable)(`SkillRepository: ${backend.name}${backend.unavailable ? ` (skipped: ${backend.unavailable})` : ''}`, () => {
    it('a skill round trips with its files; replace swaps every file; keys; remove', async () => {
      const [repo] = await backend.open();
      const feed = linkedFeeds(1)[0]!;
      const catalog = await SkillCatalog.create(repo, feed, (e) => {
        throw e;
      });
      const added = await catalog.add(skillFiles('release-notes'), { keys: ['k1', 'k1', 'k2'] });
      expect(added).toEqual({
        name: 'release-notes',
        description: 'Release notes ünï',
        body: 'Write release notes in three bullets.',
        files: ['SKILL.md', 'bin/tool.bin', 'templates/notes.md'],
        bytes: skillFiles('release-notes').reduce((n, f) => n + f.data.length, 0),
        keys: ['k1', 'k2'],
      });
      expect(await repo.loadAll()).toEqual([added]);
      expect(await repo.file('release-notes', 'bin/tool.bin')).toEqual(Buffer.from([0, 1, 2, 255, 254]));
      expect(await repo.file('release-notes', '../x')).toBeUndefined();
      await expect(catalog.add(skillFiles('release-notes'), {})).rejects.toMatchObject({ status: 409 });
      const replaced = await catalog.add([{ path: 'SKILL.md', data: Buffer.from('---\nname: release-notes\ndescription: v2\n---\nNew body.') }], { replace: true });
      expect(replaced).toMatchObject({ description: 'v2', body: 'New body.', files: ['SKILL.md'], keys: ['k1', 'k2'] });
      expect(await repo.file('release-notes', 'templates/notes.md')).toBeUndefined();
      expect((await repo.loadAll())[0]).toEqual(replaced);
      expect(await catalog.setKeys('release-notes', ['k3'])).toMatchObject({ keys: ['k3'] });
      expect((await repo.loadAll())[0]?.keys).toEqual(['k3']);
      expect(await catalog.setKeys('nope', ['k3'])).toBeUndefined();
      expect(await repo.setKeys('nope', ['k3'])).toBe(false);
      expect(await catalog.remove('release-notes')).toBe(true);
      expect(await catalog.remove('release-notes')).toBe(false);
      expect(await repo.loadAll()).toEqual([]);
      expect(await repo.remove('release-notes')).toBe(false);
    });

    it('two nodes: a skill installed on A is served by B once the notice arrives (within 1 s); keys and removal follow', async () => {
      const [repoA, repoB] = await backend.open();
      const [feedA, feedB] = linkedFeeds(2);
      const fail = (e: unknown) => {
        throw e;
      };
      const a = await SkillCatalog.create(repoA, feedA!, fail);
      const b = await SkillCatalog.create(repoB, feedB!, fail);
      const t0 = Date.now();
      await a.add(skillFiles('greeter', 'Greet warmly.'), { keys: ['k1'] });
      const deadline = Date.now() + 1000;
      while (!b.hasSkillsFor('k1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(b.instructionsFor('k1')).toContain('## Skill: greeter\nRelease notes ünï\n\nGreet warmly.');
      expect(b.list().map((s) => s.name)).toEqual(['greeter']);
      await b.setKeys('greeter', ['k2']);
      await new Promise((r) => setTimeout(r, 50));
      expect(a.hasSkillsFor('k1')).toBe(false);
      expect(a.hasSkillsFor('k2')).toBe(true);
      await a.remove('greeter');
      await new Promise((r) => setTimeout(r, 50));
      expect(b.get('greeter')).toBeUndefined();
    });

    it('router cluster migrate: a single machine\'s skill folders are copied with their files and keys', async () => {
      const [into] = await backend.open();
      const dir = mkdtempSync(join(tmpdir(), 'router-skills-home-'));
      dirs.push(dir);
      const home = new DiskSkillRepository(join(dir, 'skills'));
      const one = await SkillCatalog.create(home, linkedFeeds(1)[0]!, () => {});
      await one.add(skillFiles('alpha'), { keys: ['k1'] });
      await one.add(skillFiles('beta'), {});
      expect(await copySkillFolders(join(dir, 'skills'), into)).toBe(2);
      const byName = (all: Awaited<ReturnType<SkillRepository['loadAll']>>) => all.sort((x, y) => x.name.localeCompare(y.name));
      expect(byName(await into.loadAll())).toEqual(byName(await home.loadAll()));
      expect(await into.file('alpha', 'bin/tool.bin')).toEqual(Buffer.from([0, 1, 2, 255, 254]));
      expect(await copySkillFolders(join(dir, 'nothing-here'), into)).toBe(0);
    });
  });
}
