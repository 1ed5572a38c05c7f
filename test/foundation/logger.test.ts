/** The daemon log: batched appends, size-capped rotation to `.1`, `.2`, ... keeping N files. */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Logger } from '../../src/daemon/logger.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function logFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'router-log-'));
  dirs.push(dir);
  return join(dir, 'router.log');
}

/** Waits until the logger has written everything it buffered (writes are asynchronous by design). */
async function settled(log: Logger): Promise<void> {
  const internals = log as unknown as { buffer: string[]; writing: boolean };
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setImmediate(r));
    if (!internals.writing && internals.buffer.length === 0) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('logger did not settle');
}

const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
const seqs = (text: string) => [...text.matchAll(/line-(\d+)/g)].map((m) => Number(m[1]));

describe('Logger rotation', () => {
  it('rotates past maxBytes to .1, .2 and keeps only N rotated files, newest lines in the live file', async () => {
    const file = logFile();
    const log = new Logger({ file, maxBytes: 400, keep: 2 });
    for (let i = 0; i < 40; i++) {
      log.info(`line-${i}`, { pad: 'x'.repeat(40) });
      await settled(log);
    }
    expect(existsSync(`${file}.1`)).toBe(true);
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
    // A file is rotated once it passes maxBytes, so every rotated file holds more than maxBytes...
    expect(statSync(`${file}.1`).size).toBeGreaterThan(400);
    expect(statSync(`${file}.2`).size).toBeGreaterThan(400);
    // ...and the live file (absent right after a rotation, until the next line) never grows far past it.
    expect(Buffer.byteLength(read(file))).toBeLessThanOrEqual(400 + 200);

    // Order: .2 is oldest, then .1, then the live file; nothing after the oldest kept line is lost.
    const [s2, s1, s0] = [seqs(read(`${file}.2`)), seqs(read(`${file}.1`)), seqs(read(file))];
    const all = [...s2, ...s1, ...s0];
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(all.at(-1)).toBe(39);
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => 40 - all.length + i));
    expect(s2[0]).toBeGreaterThan(0); // the oldest lines were dropped with the .3 that is not kept
    // Lines are whole: every line has a timestamp, a level and the message.
    for (const line of read(`${file}.1`).trimEnd().split('\n')) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO  line-\d+ \{"pad":"x+"\}$/);
  });

  it('keep: 1 holds a single rotated file', async () => {
    const file = logFile();
    const log = new Logger({ file, maxBytes: 200, keep: 1 });
    for (let i = 0; i < 20; i++) {
      log.warn(`line-${i}`, { pad: 'y'.repeat(30) });
      await settled(log);
    }
    expect(existsSync(`${file}.1`)).toBe(true);
    expect(existsSync(`${file}.2`)).toBe(false);
  });

  it('counts an existing file toward maxBytes at start', async () => {
    const file = logFile();
    writeFileSync(file, 'z'.repeat(1000));
    const log = new Logger({ file, maxBytes: 500, keep: 3 });
    log.info('line-0');
    await settled(log);
    expect(read(`${file}.1`)).toMatch(/^z{1000}.*line-0/s);
    expect(read(file)).toBe('');
  });

  it('does not write debug lines unless ROUTER_DEBUG is set; flushSync writes what is buffered', () => {
    const file = logFile();
    const log = new Logger({ file });
    const saved = process.env.ROUTER_DEBUG;
    delete process.env.ROUTER_DEBUG;
    try {
      log.debug('hidden');
      log.error('shown', { n: 1 });
      log.flushSync();
    } finally {
      if (saved !== undefined) process.env.ROUTER_DEBUG = saved;
    }
    const text = read(file);
    expect(text).toMatch(/ERROR shown \{"n":1\}\n$/);
    expect(text).not.toContain('hidden');
  });
});
