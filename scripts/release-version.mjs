#!/usr/bin/env node
/**
 * The `version` npm script: runs inside `npm version <x>` after package.json (and its lock) carry the new
 * number, before npm commits and tags. It keeps the release's other records in step:
 * - CHANGELOG.md: the Unreleased section becomes `## [X.Y.Z] - YYYY-MM-DD`, and a new empty Unreleased
 *   section goes on top (spec "Versioning" 3);
 * - migrations/released.json: every migration shipped in this release, with its checksum, so a later
 *   deletion or edit fails the test suite (spec "Versioning" 4).
 * The OpenAPI document needs nothing: its info.version is read from package.json at run time.
 * Usage: node scripts/release-version.mjs [rootDir] (the root defaults to this checkout); `--no-git`
 * skips `git add`.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const root = resolve(args.find((a) => !a.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), '..'));
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`package.json version ${version} is not MAJOR.MINOR.PATCH`);

/** Moves the Unreleased section under the new version's heading (once: a second run changes nothing). */
export function releaseChangelog(text, v, date) {
  if (text.includes(`## [${v}]`)) return text;
  const marker = '## [Unreleased]';
  if (!text.includes(marker)) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  return text.replace(marker, `${marker}\n\n## [${v}] - ${date}`);
}

const changelogFile = join(root, 'CHANGELOG.md');
const today = new Date().toISOString().slice(0, 10);
writeFileSync(changelogFile, releaseChangelog(readFileSync(changelogFile, 'utf8'), version, today));

const migrationsDir = join(root, 'migrations');
const manifestFile = join(migrationsDir, 'released.json');
const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
for (const file of readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort()) {
  if (manifest.migrations.some((m) => m.name === file)) continue;
  const sha256 = createHash('sha256').update(readFileSync(join(migrationsDir, file), 'utf8')).digest('hex');
  manifest.migrations.push({ name: file, sha256, release: version });
}
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

if (!args.includes('--no-git')) execFileSync('git', ['add', 'CHANGELOG.md', 'migrations/released.json'], { cwd: root, stdio: 'inherit' });
console.log(`router ${version}: CHANGELOG.md and migrations/released.json updated`);
