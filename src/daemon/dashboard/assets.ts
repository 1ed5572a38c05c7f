import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One built file of the dashboard, held in memory with its precompressed forms (written at build time). */
export interface Asset {
  body: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
}

export const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The folder of the built dashboard (`dist/dashboard`, written by `npm run build:dashboard`), found from
 * this module upwards: the daemon runs from dist/ (or from src/ under vitest), so the package root is the
 * first ancestor holding package.json.
 */
export function dashboardDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) {
      const out = join(dir, 'dist', 'dashboard');
      return existsSync(join(out, 'index.html')) ? out : undefined;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(p)));
    else if (!entry.name.endsWith('.br') && !entry.name.endsWith('.gz')) out.push(p);
  }
  return out;
}

async function maybe(path: string): Promise<Buffer | undefined> {
  return readFile(path).catch(() => undefined);
}

/**
 * The built files, read once (a few hundred KB) on the first dashboard request and kept: serving them is
 * then a map lookup, no disk read per request. Keys are URL paths (`/index.html`, `/assets/index-abc.js`).
 */
export class DashboardAssets {
  private loaded?: Promise<Map<string, Asset> | undefined>;

  constructor(private readonly dir: () => string | undefined = dashboardDir) {}

  files(): Promise<Map<string, Asset> | undefined> {
    this.loaded ??= this.load().catch(() => undefined);
    return this.loaded;
  }

  private async load(): Promise<Map<string, Asset> | undefined> {
    const dir = this.dir();
    if (!dir) return undefined;
    const map = new Map<string, Asset>();
    for (const file of await walk(dir)) {
      const body = await readFile(file);
      const url = `/${relative(dir, file).split(sep).join('/')}`;
      const [br, gzip] = await Promise.all([maybe(`${file}.br`), maybe(`${file}.gz`)]);
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
      map.set(url, { body, br, gzip, type: TYPES[extname(file)] ?? 'application/octet-stream', etag: `"${hash}"` });
    }
    return map;
  }
}
