/**
 * Versioning (spec "Versioning" 1, 3, 4): package.json, its lock, the OpenAPI document and CHANGELOG.md
 * agree on the version; `npm version`'s hook (scripts/release-version.mjs) keeps them so; migrations are
 * numbered without gaps or collisions, and released ones are never deleted or edited.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/daemon/http/openapi.js';
import { ROUTES } from '../../src/daemon/routes.js';
import { MIGRATIONS_DIR, readMigrations } from '../../src/daemon/store/migrate.js';
import { PACKAGE_ROOT, VERSION } from '../../src/shared/version.js';

const read = (file: string) => readFileSync(join(PACKAGE_ROOT, file), 'utf8');
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

describe('version agreement', () => {
  it('package.json, package-lock.json, the OpenAPI info.version and CHANGELOG.md name the same MAJOR.MINOR.PATCH', () => {
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(VERSION).toBe(pkg.version);
    const lock = JSON.parse(read('package-lock.json'));
    expect(lock.version).toBe(pkg.version);
    expect(lock.packages[''].version).toBe(pkg.version);
    const doc = buildOpenApi(ROUTES, VERSION) as { openapi: string; info: { version: string } };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkg.version);
    const changelog = read('CHANGELOG.md');
    expect(changelog).toMatch(new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
    expect(changelog).toContain('## [Unreleased]');
    expect(pkg.scripts.version).toBe('node scripts/release-version.mjs');
  });

  it("npm version's hook turns Unreleased into the new version's section and records the release's migrations", () => {
    const root = mkdtempSync(join(tmpdir(), 'router-release-'));
    temps.push(root);
    cpSync(join(PACKAGE_ROOT, 'migrations'), join(root, 'migrations'), { recursive: true });
    writeFileSync(join(root, 'migrations', '0999_future.sql'), 'CREATE TABLE future (id INTEGER);\n');
    writeFileSync(join(root, 'CHANGELOG.md'), '# Changelog\n\n## [Unreleased]\n\n### Added\n- a thing\n\n## [0.1.0] - 2026-01-01\n\n- first\n');
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'router', version: '0.2.0' }));
    execFileSync(process.execPath, [join(PACKAGE_ROOT, 'scripts', 'release-version.mjs'), root, '--no-git']);
    const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
    const today = new Date().toISOString().slice(0, 10);
    expect(changelog).toBe(`# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - ${today}\n\n### Added\n- a thing\n\n## [0.1.0] - 2026-01-01\n\n- first\n`);
    const manifest = JSON.parse(readFileSync(join(root, 'migrations', 'released.json'), 'utf8'));
    expect(manifest.migrations.at(-1)).toMatchObject({ name: '0999_future.sql', release: '0.2.0' });
    // A second run (npm version re-run, or a retry) changes nothing.
    execFileSync(process.execPath, [join(PACKAGE_ROOT, 'scripts', 'release-version.mjs'), root, '--no-git']);
    expect(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).toBe(changelog);
    expect(JSON.parse(readFileSync(join(root, 'migrations', 'released.json'), 'utf8')).migrations).toHaveLength(manifest.migrations.length);
  });
});

describe('migrations', () => {
  it('are numbered 0001.. in sequence: no gap, no number used twice', () => {
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort();
    const numbers = files.map((f) => Number(f.slice(0, 4)));
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(() => readMigrations(MIGRATIONS_DIR)).not.toThrow();
  });

  it('a released migration is never deleted or edited (migrations/released.json)', () => {
    const manifest = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'released.json'), 'utf8')) as { migrations: Array<{ name: string; sha256: string }> };
    expect(manifest.migrations.length).toBeGreaterThan(0);
    for (const m of manifest.migrations) {
      let sql: string;
      try {
        sql = readFileSync(join(MIGRATIONS_DIR, m.name), 'utf8');
      } catch {
        throw new Error(`released migration ${m.name} was deleted or renamed`);
      }
      expect(createHash('sha256').update(sql).digest('hex'), `released migration ${m.name} was edited`).toBe(m.sha256);
    }
  });
});
