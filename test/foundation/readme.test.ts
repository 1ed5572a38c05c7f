/**
 * Issue 27 item 13: a new user reads in the README which Node version router needs (the `engines` range of
 * package.json) and that a C++ toolchain is needed when better-sqlite3 has no prebuilt binary to download;
 * the two first commands stay at the top.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

describe('README', () => {
  it('starts with the install and test commands', () => {
    const blocks = [...readme.matchAll(/```sh\n([^`]*)```/g)].map((m) => m[1]!.trim());
    expect(blocks.slice(0, 2)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });

  it("states the Node version of package.json's engines", () => {
    const min = /^>=\s*(\d+\.\d+)/.exec(pkg.engines.node)?.[1];
    expect(min, 'engines.node is a >= range').toBeTruthy();
    expect(readme).toMatch(new RegExp(`Node\\.js ${min!.replace('.', '\\.')} or newer`));
  });

  it('names the C++ toolchain needed when no prebuilt better-sqlite3 binary can be downloaded', () => {
    const para = readme.split('\n\n').find((p) => p.includes('better-sqlite3') && /prebuilt/.test(p)) ?? '';
    for (const tool of ['python3', 'make', 'g++']) expect(para).toContain(`\`${tool}\``);
  });
});
